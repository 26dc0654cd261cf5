"""`T.atomic_add(region, scalar)` adds the scalar to every element of the region (it added to the first element only,
on both backends): the CPU against torch, and the CUDA lowering an element loop that nvcc compiles."""
from __future__ import annotations

import pytest
from test_cpu_backend import build_src

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

REGION_PLUS_SCALAR = """
import tilelang.language as T


@T.prim_func
def add_scalar(A: T.Tensor((8,), T.float32), B: T.Tensor((6, 32), T.float32)):
    with T.Kernel(2, threads=64) as bx:
        T.atomic_add(B[bx * 3:bx * 3 + 2, :], A[bx] * 2 + 1)
        T.atomic_add(B, 0.5)
"""


def _expected(a, b):
    out = b + 0.5 * 2  # both blocks add 0.5 to the whole of B
    for bx in range(2):
        out[bx * 3:bx * 3 + 2] += a[bx] * 2 + 1
    return out


def test_cpu_adds_the_scalar_to_every_element_of_the_region():
    a, b = torch.randn(8), torch.randn(6, 32)
    want = _expected(a, b)
    build_src(REGION_PLUS_SCALAR)(a, b)
    torch.testing.assert_close(b, want)


@pytest.mark.nvcc
def test_cuda_lowers_an_element_loop_that_nvcc_compiles():
    import textwrap

    from tilelang_core.check import check_source
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    kernel = check_source(textwrap.dedent(REGION_PLUS_SCALAR), "<test>").kernels[0]
    source = generate(kernel, "sm_90a").source
    assert source.count("tl::atomic_add(") == 2 and "for (" in source
    assert compile_cubin(source, "sm_90a")[:4] == b"\x7fELF"


TMA_ADD = """
import tilelang.language as T


@T.prim_func
def tma_add(A: T.Tensor((4, 8), T.float32), B: T.Tensor((4, 8), T.float32)):
    with T.Kernel(1):
        T.atomic_add(B, A, use_tma=True)
"""


def test_a_tma_reduce_add_from_a_global_tile_is_refused_at_the_line():
    import textwrap

    from tilelang_core.check import check_source

    (err,) = check_source(textwrap.dedent(TMA_ADD), "<test>").errors
    assert err.span.line == 8 and err.code == "tma-atomic-unsupported" and "use_tma" in err.message
