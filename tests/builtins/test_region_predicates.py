"""T.all_of / T.any_of over a buffer region: CPU results, CUDA that nvcc compiles, an unknown extent refused."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

SRC = """
import tilelang.language as T

@T.prim_func
def k(M: T.Tensor((4, 3), "bool"), O: T.Tensor((4, 2), T.int32)):
    with T.Kernel(4, threads=32) as bx:
        L = T.alloc_local((3,), "bool")
        for i in T.serial(3):
            L[i] = M[bx, i]
        if T.get_thread_binding() == 0:
            O[bx, 0] = T.if_then_else(T.all_of(M[bx, :]), 1, 0)
            O[bx, 1] = T.if_then_else(T.any_of(L), 1, 0)
"""


def _kernel(src: str):
    res = check_source(textwrap.dedent(src), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


@pytest.mark.tvm
def test_all_of_and_any_of_on_the_cpu():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    m = torch.tensor([[1, 1, 1], [1, 0, 1], [0, 0, 0], [0, 0, 1]], dtype=torch.bool)
    o = torch.zeros(4, 2, dtype=torch.int32)
    cpu.build(_kernel(SRC))(m, o)
    assert o.tolist() == [[1, 1], [0, 1], [0, 0], [0, 1]]


@pytest.mark.tvm
@pytest.mark.nvcc
def test_all_of_compiles_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    assert compile_cubin(generate(_kernel(SRC), "sm_90a").source, "sm_90a")[:4] == b"\x7fELF"


def test_a_region_of_unknown_extent_is_refused():
    src = textwrap.dedent(SRC).replace("def k(M: T.Tensor((4, 3)", "def k(n: T.int32, M: T.Tensor((4, 3)").replace(
        "T.all_of(M[bx, :])", "T.all_of(M[bx, 0:n])")
    errs = check_source(src, "<test>").errors
    assert errs and "known at compile time" in errs[0].message and errs[0].span.line == 11
