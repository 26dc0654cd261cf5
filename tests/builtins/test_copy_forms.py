"""T.copy between two elements is the element store (so it may sit in a T.Parallel body, reading a guarded global
with its safe value): CPU numerics and CUDA that nvcc compiles."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

pytestmark = pytest.mark.tvm

ELEMENTS = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((70, 75), T.float32), B: T.Tensor((96, 96), T.float32)):
    with T.Kernel(1, threads=128):
        T.annotate_safe_value({A: -99})
        for i, j in T.Parallel(96, 96):
            T.copy(A[i, j], B[i, j])
"""


def _kernel(src: str):
    res = check_source(textwrap.dedent(src), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


def test_an_element_copy_in_a_parallel_loop_reads_the_safe_value_outside_the_tensor():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a, b = torch.randn(70, 75), torch.zeros(96, 96)
    cpu.build(_kernel(ELEMENTS))(a, b)
    want = torch.full((96, 96), -99.0)
    want[:70, :75] = a
    assert torch.equal(b, want)


@pytest.mark.nvcc
def test_an_element_copy_in_a_parallel_loop_compiles_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    src = generate(_kernel(ELEMENTS), "sm_90a").source
    assert compile_cubin(src, "sm_90a")[:4] == b"\x7fELF"
