"""T.align_up(lhs, rhs): folded for constants, `ceildiv(lhs, rhs) * rhs` at run time (CPU), negative values too."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

SRC = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((2,), T.int32), a: T.int32):
    with T.Kernel(1, threads=1):
        A[0] = T.align_up(T.int32(a), T.int32(32))
        A[1] = T.align_up(100, 32)
"""


@pytest.mark.tvm
@pytest.mark.parametrize("a,want", [(128, 128), (1, 32), (-1, 0), (-33, -32), (33, 64)])
def test_align_up_on_the_cpu(a, want):
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    res = check_source(textwrap.dedent(SRC), "<test>")
    assert not res.errors
    out = torch.zeros(2, dtype=torch.int32)
    cpu.build(res.kernels[0])(out, a)
    assert out.tolist() == [want, 128]
