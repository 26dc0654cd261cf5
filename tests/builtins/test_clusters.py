"""T.ClusterKernel(..., cluster_dims=...) and T.block_rank_in_cluster: the rank on the CPU backend (x fastest, over a
2-D cluster and across cluster barriers), CUDA compiled with `__cluster_dims__` that nvcc accepts, and cluster shapes
that cannot be refused at the line."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

SRC = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((8, 6), T.int32), B: T.Tensor((8, 6), T.int32)):
    with T.ClusterKernel(8, 6, threads=32, cluster_dims=(2, 3)) as (bx, by):
        T.cluster_arrive()
        T.cluster_wait()
        if T.get_thread_binding() == 0:
            A[bx, by] = T.block_rank_in_cluster()
        T.cluster_sync()
        if T.get_thread_binding() == 0:
            B[T.get_block_binding(0), T.get_block_binding(1)] = T.block_rank_in_cluster() + 10
"""


def _kernel(src: str):
    res = check_source(textwrap.dedent(src), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


@pytest.mark.tvm
def test_block_rank_in_cluster_on_the_cpu():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a, b = torch.zeros(8, 6, dtype=torch.int32), torch.zeros(8, 6, dtype=torch.int32)
    cpu.build(_kernel(SRC))(a, b)
    x, y = torch.meshgrid(torch.arange(8), torch.arange(6), indexing="ij")
    want = (x % 2 + (y % 3) * 2).to(torch.int32)
    assert torch.equal(a, want) and torch.equal(b, want + 10)


@pytest.mark.tvm
@pytest.mark.nvcc
def test_cluster_kernels_compile_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    src = generate(_kernel(SRC), "sm_90a").source
    assert "__cluster_dims__(2, 3, 1)" in src and "tl::block_rank_in_cluster()" in src
    assert compile_cubin(src, "sm_90a")[:4] == b"\x7fELF"


def test_cluster_dims_must_be_positive_integers():
    errs = check_source(textwrap.dedent(SRC).replace("cluster_dims=(2, 3)", "cluster_dims=(2, 0)"), "<test>").errors
    assert errs and errs[0].code == "invalid-kernel" and "cluster_dims=" in errs[0].message
    assert errs[0].span.line == 6


@pytest.mark.tvm
def test_clusters_before_hopper_are_refused():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.codegen.cuda.common import LoweringError

    with pytest.raises(LoweringError, match="need sm_90 or newer") as err:
        generate(_kernel(SRC), "sm_80")
    assert err.value.span.line == 6


REMOTE_ARRIVE = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((128,), T.int32)):
    with T.ClusterKernel(128, threads=128, cluster_dims=(4, 1, 1)):
        mbar = T.alloc_cluster_barrier([512])
        T.cluster_sync()
        T.mbarrier_arrive(mbar, 0)
        if T.block_rank_in_cluster() == 0:
            T.mbarrier_wait_parity(mbar, 0)
        T.cluster_sync()
"""


@pytest.mark.tvm
@pytest.mark.nvcc
def test_an_arrival_on_the_first_blocks_barrier_compiles_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    src = generate(_kernel(REMOTE_ARRIVE), "sm_90a").source
    assert "tl::mbar_arrive_cluster(" in src and compile_cubin(src, "sm_90a")[:4] == b"\x7fELF"


@pytest.mark.tvm
def test_an_arrival_on_another_blocks_barrier_before_hopper_is_refused():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.codegen.cuda.common import LoweringError

    src = REMOTE_ARRIVE.replace(", cluster_dims=(4, 1, 1)", "")
    with pytest.raises(LoweringError, match="cta_id") as err:
        generate(_kernel(src), "sm_80")
    assert err.value.span.line == 9


UNNAMED = """
import tilelang.language as T

@T.prim_func
def k(B: T.Tensor((4, 3), T.int32)):
    with T.Kernel(4, 3, threads=32):
        if T.get_thread_binding() == 0:
            B[T.get_block_binding(0), T.get_block_binding(1)] = T.get_block_binding(0) * 10 + T.get_block_binding(1)
"""


@pytest.mark.tvm
def test_block_bindings_of_a_kernel_that_names_no_block_index():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu
    from tilelang_core.codegen.cuda import generate

    b = torch.zeros(4, 3, dtype=torch.int32)
    cpu.build(_kernel(UNNAMED))(b)
    assert b.tolist() == [[10 * x + y for y in range(3)] for x in range(4)]
    src = generate(_kernel(UNNAMED), "sm_90a").source
    assert "blockIdx.y" in src and "B_ptr[((((int)blockIdx.x) * 3)" in src
