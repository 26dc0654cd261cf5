"""Thread-level builtins: T.cluster_arrive / cluster_wait / cluster_sync and T.tma_store_arrive / tma_store_wait
(on the CPU a cluster barrier ends a phase of every block, as T.sync_grid; on CUDA barrier.cluster), T.pdl_* and
T.shfl_sync."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

pytestmark = pytest.mark.tvm

SRC = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((8,), T.int32), B: T.Tensor((8,), T.int32)):
    with T.Kernel(8, threads=32) as bx:
        if T.get_thread_binding() == 0:
            A[bx] = bx + 1
        T.cluster_arrive()
        T.cluster_wait()
        if T.get_thread_binding() == 0:
            B[bx] = A[(bx + 1) % 8]
        T.cluster_sync()
        T.tma_store_arrive()
        T.tma_store_wait()
"""


def _kernel(src: str):
    res = check_source(textwrap.dedent(src), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


def test_a_cluster_barrier_orders_the_blocks_on_the_cpu():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a, b = torch.zeros(8, dtype=torch.int32), torch.zeros(8, dtype=torch.int32)
    cpu.build(_kernel(SRC))(a, b)
    assert b.tolist() == [2, 3, 4, 5, 6, 7, 8, 1]  # every block wrote A before any block read it


@pytest.mark.nvcc
def test_cluster_barriers_compile_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(_kernel(SRC), "sm_90a")
    assert "barrier.cluster.wait.aligned" in ck.source
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


PDL = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((256,), T.float32), B: T.Tensor((256,), T.float32)):
    with T.Kernel(2, threads=128) as bx:
        T.pdl_sync()
        for i in T.Parallel(128):
            B[bx * 128 + i] = A[bx * 128 + i] + 1.0
        T.pdl_trigger()
"""


def test_programmatic_dependent_launch_hints_run_on_the_cpu():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a, b = torch.randn(256), torch.zeros(256)
    cpu.build(_kernel(PDL))(a, b)
    torch.testing.assert_close(b, a + 1)


@pytest.mark.nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_programmatic_dependent_launch_compiles(arch):
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(_kernel(PDL), arch)
    assert "cudaGridDependencySynchronize" in ck.source
    assert compile_cubin(ck.source, arch)[:4] == b"\x7fELF"


SHFL = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((64,), T.int32)):
    with T.Kernel(1, threads=64):
        tx = T.get_thread_binding()
        val = tx * 10
        A[tx] = T.shfl_sync(val, 31)
"""


def test_shfl_sync_reads_the_source_lane_on_the_cpu():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a = torch.zeros(64, dtype=torch.int32)
    cpu.build(_kernel(SHFL))(a)
    assert a.tolist() == [310] * 32 + [630] * 32


@pytest.mark.nvcc
def test_shfl_sync_compiles_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(_kernel(SHFL), "sm_90a")
    assert "__shfl_sync(" in ck.source and compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"
