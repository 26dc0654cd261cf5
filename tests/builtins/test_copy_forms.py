"""T.copy between two elements is the element store (so it may sit in a T.Parallel body, reading a guarded global
with its safe value), and a copy whose sides cover different extents loops over one side's, as TileLang does (a
copy-extent-differs warning; refused when that side is a smaller destination): CPU numerics and CUDA that nvcc
compiles."""
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


DIFFERING = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((32, 64), T.float32), B: T.Tensor((32, 64), T.float32), G: T.Tensor((32, 64), T.float32),
      H: T.Tensor((16, 64), T.float32)):
    with T.Kernel(1, threads=128):
        S = T.alloc_shared((32, 64), T.float32)
        R = T.alloc_shared((16, 64), T.float32)
        T.copy(A[:, 0:2], B[:, 0:3])
        T.copy(A, S)
        T.copy(S, G[0:32, 0:48])
        T.copy(A[0:16, 0:32], R)
        T.copy(R, H)
"""


def test_differing_extents_are_a_warning_naming_the_side_the_loop_follows():
    res = check_source(textwrap.dedent(DIFFERING), "<test>")
    assert not res.errors
    warns = [(d.span.line, d.message) for d in res.diagnostics if d.code == "copy-extent-differs"]
    assert [line for line, _ in warns] == [10, 12, 13]
    assert "loops over A's 32×2" in warns[0][1] and "part of the slice of B is not written" in warns[0][1]
    assert "G is written beyond its slice" in warns[1][1] and "A is read beyond its slice" in warns[2][1]


def test_a_smaller_destination_tile_is_refused():
    errs = check_source(textwrap.dedent(DIFFERING).replace("A[0:16, 0:32], R", "A[0:16, 0:64], R[0:16, 0:32]"),
                        "<test>").errors
    assert errs and errs[0].code == "copy-extent-mismatch" and errs[0].span.line == 13


def test_differing_extents_copy_the_loop_sides_extents_on_the_cpu():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a = torch.randn(32, 64)
    b, g, h = torch.zeros(32, 64), torch.zeros(32, 64), torch.zeros(16, 64)
    cpu.build(_kernel(DIFFERING))(a, b, g, h)
    want_b = torch.zeros(32, 64)
    want_b[:, :2] = a[:, :2]
    assert torch.equal(b, want_b) and torch.equal(g, a) and torch.equal(h, a[:16])


@pytest.mark.nvcc
def test_differing_extents_compile_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    src = generate(_kernel(DIFFERING), "sm_90a").source
    assert compile_cubin(src, "sm_90a")[:4] == b"\x7fELF"
