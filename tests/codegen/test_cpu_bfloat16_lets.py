"""A bfloat16 scalar let on the CPU backend (`val = A[i]`, and the old value `T.atomic_add(..., return_prev=True)`
binds): TVM 0.27 legalises such a Bind only half way, so the backend keeps it in a one-element buffer."""
from __future__ import annotations

import pytest

import tilelang_core.language as T
from tilelang_core.runtime.jit import compile as tl_compile

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm


def _kernel(dtype):
    @T.prim_func
    def lets(A: T.Tensor((8, 8), dtype), B: T.Tensor((8, 8), dtype), Old: T.Tensor((8, 8), dtype)):
        with T.Kernel(2, 2, threads=16) as (bx, by):
            for i, j in T.Parallel(4, 4):
                r = bx * 4 + i
                c = by * 4 + j
                val = A[r, c] * 2.0
                T.atomic_add(B[r, c], val)
                Old[r, c] = T.atomic_add(B[r, c], A[r, c], return_prev=True)

    return lets


@pytest.mark.parametrize("dtype", ["bfloat16", "float16", "float32"])
def test_scalar_lets_and_returned_old_values(dtype):
    kernel = tl_compile(_kernel(dtype), target="cpu")
    tdt = getattr(torch, dtype)
    a = torch.arange(64, dtype=torch.float32).reshape(8, 8).div(8).to(tdt)
    b = torch.full((8, 8), 1.5, dtype=tdt)
    old = torch.zeros_like(b)
    kernel(a, b, old)
    torch.testing.assert_close(old, (1.5 + a.float() * 2).to(tdt))
    torch.testing.assert_close(b, ((1.5 + a.float() * 2).to(tdt).float() + a.float()).to(tdt))
