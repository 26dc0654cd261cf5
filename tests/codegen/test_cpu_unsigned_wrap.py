"""Unsigned arithmetic wraps modulo 2**bits on the CPU backend as in C/CUDA (TVM's LLVM codegen marks uint32/uint64
adds `nuw`, which let LLVM fold a carry test `a + b < a` to false)."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

import tilelang_core as tilelang  # noqa: E402
import tilelang_core.language as T  # noqa: E402

N = 512


@tilelang.jit(out_idx=[-1], target="cpu")
def unsigned_ops(dtype, block=128):
    @T.prim_func
    def main(A: T.Tensor((N,), dtype), B: T.Tensor((N,), dtype), Out: T.Tensor((6, N), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                a = A[bx * block + i]
                b = B[bx * block + i]
                s = a + b
                Out[0, bx * block + i] = T.if_then_else(s < a, T.cast(1, dtype), T.cast(0, dtype))  # carry
                Out[1, bx * block + i] = s
                Out[2, bx * block + i] = a - b
                Out[3, bx * block + i] = a * b
                Out[4, bx * block + i] = -a
                Out[5, bx * block + i] = T.if_then_else(a - b > a, T.cast(1, dtype), T.cast(0, dtype))  # borrow
    return main


@pytest.mark.parametrize("dtype,np_dtype,bits", [("uint32", np.uint32, 32), ("uint64", np.uint64, 64)])
def test_unsigned_add_sub_mul_neg_wrap_and_carry_tests_survive(dtype, np_dtype, bits):
    rng = np.random.default_rng(7)
    a = rng.integers(0, 2**63, N, dtype=np.uint64) * 2 + rng.integers(0, 2, N, dtype=np.uint64)
    b = rng.integers(0, 2**63, N, dtype=np.uint64) * 2 + rng.integers(0, 2, N, dtype=np.uint64)
    a, b = a.astype(np_dtype), b.astype(np_dtype)
    a[:4] = [0, 1, np.iinfo(np_dtype).max, 5]
    b[:4] = [0, np.iinfo(np_dtype).max, np.iinfo(np_dtype).max, 7]
    signed = {32: (np.int32, torch.uint32), 64: (np.int64, torch.uint64)}[bits]
    as_t = lambda v: torch.from_numpy(v.view(signed[0]).copy()).view(signed[1])  # noqa: E731
    got = unsigned_ops(dtype)(as_t(a), as_t(b)).view(getattr(torch, f"int{bits}")).numpy().view(np_dtype)
    mask = (1 << bits) - 1
    ai, bi = [int(x) for x in a], [int(x) for x in b]
    want = np.array([[int(x + y > mask) for x, y in zip(ai, bi)],
                     [(x + y) & mask for x, y in zip(ai, bi)],
                     [(x - y) & mask for x, y in zip(ai, bi)],
                     [(x * y) & mask for x, y in zip(ai, bi)],
                     [(-x) & mask for x in ai],
                     [int(y > x) for x, y in zip(ai, bi)]], dtype=np_dtype)
    for row, what in enumerate(("carry", "sum", "difference", "product", "negation", "borrow")):
        assert (got[row] == want[row]).all(), f"{dtype} {what}: {(got[row] != want[row]).sum()} wrong"
