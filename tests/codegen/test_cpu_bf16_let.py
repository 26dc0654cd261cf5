"""A bfloat16 value bound to a name (`val = A[i, j]`) on the CPU backend: kept in a one-element buffer, since TVM's
BF16 legalisation retypes the bound value to float32 but not its variable (LLVM build check failed)."""
from __future__ import annotations

import pytest
from test_cpu_backend import build_src

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

SRC = """
import tilelang
import tilelang.language as T


@T.prim_func
def k(A: T.Tensor((32, 32), T.bfloat16), B: T.Tensor((32, 32), T.bfloat16), C: T.Tensor((32, 32), T.bfloat16)):
    with T.Kernel(4, 4, threads=32) as (bx, by):
        for i, j in T.Parallel(8, 8):
            r = bx * 8 + i
            c = by * 8 + j
            if r < 32 and c < 32:
                val = A[r, c]
                B[r, c] = val * 2
                T.atomic_max(C[r, c], val)
"""


def test_a_bfloat16_let_in_a_guarded_parallel_loop():
    a = torch.randn(32, 32).bfloat16()
    b, c = torch.zeros(32, 32).bfloat16(), torch.zeros(32, 32).bfloat16()
    build_src(SRC)(a, b, c)
    assert torch.equal(b, a * 2) and torch.equal(c, a.clamp(min=0))
