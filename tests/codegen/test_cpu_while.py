"""CPU numerics of runtime `while` loops with `break`/`continue` (lowered to flags) against a Python reference."""
from __future__ import annotations

import pytest
from test_cpu_backend import build_src
from while_kernels import PERSISTENT

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

SCAN = """
import tilelang
import tilelang.language as T


@T.prim_func
def scan(A: T.Tensor((8, 16), T.float32), B: T.Tensor((8, 16), T.float32), L: T.Tensor((8,), T.int32)):
    with T.Kernel(2, threads=32) as bx:
        for r in T.serial(4):
            row = bx * 4 + r
            j = T.alloc_var(T.int32)
            j = 0
            acc = T.alloc_var(T.float32)
            acc = 0
            while j < 16:
                if A[row, j] < 0:
                    j += 1
                    continue
                acc += A[row, j]
                B[row, j] = acc
                if acc > 6:
                    break
                j += 1
            L[row] = j
            for k in T.serial(16):
                if k >= j:
                    break
                for q in T.serial(2):
                    if q == 1:
                        continue
                    B[row, k] = B[row, k] + 100
"""


def _reference(a):
    b, lens = torch.zeros_like(a), torch.zeros(a.shape[0], dtype=torch.int32)
    for r in range(a.shape[0]):
        j, acc = 0, 0.0
        while j < 16:
            if a[r, j] < 0:
                j += 1
                continue
            acc += float(a[r, j])
            b[r, j] = acc
            if acc > 6:
                break
            j += 1
        lens[r] = j
        for k in range(16):
            if k >= j:
                break
            b[r, k] += 100
    return b, lens


def test_while_break_continue_match_python():
    mod = build_src(SCAN)
    torch.manual_seed(0)
    a = torch.randn(8, 16)
    b, lens = torch.zeros(8, 16), torch.zeros(8, dtype=torch.int32)
    mod(a, b, lens)
    ref_b, ref_lens = _reference(a)
    assert torch.equal(lens, ref_lens) and lens.min() < 16  # some rows stopped early
    assert torch.allclose(b, ref_b, atol=1e-5)


def test_while_true_with_a_tile_inside():
    mod = build_src("""
    import tilelang.language as T

    @T.prim_func
    def k(A: T.Tensor((64,), T.float32), B: T.Tensor((64,), T.float32)):
        with T.Kernel(1, threads=32) as bx:
            t = T.alloc_var(T.int32)
            t = 0
            while True:
                S = T.alloc_fragment((16,), T.float32)
                T.copy(A[t * 16:t * 16 + 16], S)
                for i in T.Parallel(16):
                    S[i] = S[i] * 2
                T.copy(S, B[t * 16:t * 16 + 16])
                t += 1
                if t == 3:
                    break
    """)
    a, b = torch.randn(64), torch.zeros(64)
    mod(a, b)
    assert torch.allclose(b[:48], a[:48] * 2) and torch.equal(b[48:], torch.zeros(16))


def test_let_before_the_launch():
    mod = build_src("""
    import tilelang.language as T

    @T.prim_func
    def k(A: T.Tensor((64,), T.float32), n: T.int32):
        half = n // 2
        with T.Kernel(2, threads=32) as bx:
            for i in T.Parallel(32):
                if bx * 32 + i < half:
                    A[bx * 32 + i] = A[bx * 32 + i] * 2
    """)
    a = torch.randn(64)
    ref = a.clone()
    ref[:20] *= 2
    mod(a, 40)
    assert torch.equal(a, ref)


def test_persistent_while_over_gemm_tiles():
    mod = build_src(PERSISTENT)
    a, b = torch.randn(256, 128).half(), torch.randn(128, 256).half()
    c = torch.full((256, 256), 7.0)
    mod(a, b, c)
    ref = a.float() @ b.float()
    assert (c - ref).abs().max().item() <= 1e-3


SUM_TO_TEN = """
import tilelang.language as T


@T.prim_func
def sum_to_ten(A: T.Tensor((1,), T.int32)):
    with T.Kernel(1) as _:
        i = T.alloc_var(T.int32, 0)
        total = T.alloc_var(T.int32)
        while i < 10:
            total += i
            i += 1
        A[0] = total
"""


def test_alloc_var_without_init_starts_at_zero():
    """LLVM deleted the loop and the store when `total` was an undefined scalar (the result was whatever A held)."""
    out = torch.full((1,), -7, dtype=torch.int32)
    build_src(SUM_TO_TEN)(out)
    assert out.item() == 45
