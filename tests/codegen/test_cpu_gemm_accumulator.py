"""CPU backend T.gemm with a float16 accumulator: each MMA k-step (16 deep) summed in float32 and rounded
once, as a tensor core rounds (a product at a time in fp16 left ~8 % of a K=768 GEMM past atol=rtol=1e-2)."""
from __future__ import annotations

import textwrap

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

GEMM = """
import tilelang.language as T

def matmul(M, N, K, bk, acc, dtype="float16"):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), acc)):
        with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):
            A_s = T.alloc_shared((64, bk), dtype)
            B_s = T.alloc_shared((bk, 64), dtype)
            C_l = T.alloc_fragment((64, 64), acc)
            T.copy(C[by * 64, bx * 64], C_l)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * 64, ko * bk], A_s)
                T.copy(B[ko * bk, bx * 64], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * 64, bx * 64])
    return main

k = matmul({M}, {N}, {K}, {bk}, "{acc}", "{dtype}")
"""


def _build(**kw):
    from tilelang_core.check import check_source
    from tilelang_core.codegen import cpu

    res = check_source(textwrap.dedent(GEMM.format(**kw)), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return cpu.build(res.kernels[0])


def _stepped(a, b, c, bk, step=16):
    """C += A @ B one gemm call of bk at a time, each call in steps of `step`: float32 sums rounded per step."""
    for k0 in range(0, a.shape[1], bk):
        for s in range(k0, min(k0 + bk, a.shape[1]), step):
            e = min(s + step, k0 + bk, a.shape[1])
            c = (c.float() + a[:, s:e].float() @ b[s:e].float()).to(c.dtype)
    return c


def _inputs(M, N, K, dtype, seed=0):
    g = torch.Generator().manual_seed(seed)
    tdt = getattr(torch, dtype)
    return (torch.rand(M, K, generator=g) * 2 - 1).to(tdt), (torch.rand(K, N, generator=g) * 2 - 1).to(tdt)


def test_fp16_accumulator_meets_the_tolerance_of_a_tensor_core_gemm():
    """K=768 as kernel/test_tilelang_kernel_gemm.py: under 1 % of C past atol = rtol = 1e-2 of the float32 result."""
    a, b = _inputs(128, 128, 768, "float16")
    c = torch.zeros(128, 128, dtype=torch.float16)
    _build(M=128, N=128, K=768, bk=32, acc="float16", dtype="float16")(a, b, c)
    ref = (a.float() @ b.float()).half().float()
    off = ((c.float() - ref).abs() > 1e-2 + 1e-2 * ref.abs()).float().mean().item()
    assert off < 0.01, f"{off:.2%} of C off"


@pytest.mark.parametrize("dtype,bk,K", [("float16", 32, 96), ("float16", 24, 72), ("float16", 48, 96)])
def test_each_mma_step_rounds_once_from_the_accumulator_it_started_with(dtype, bk, K):
    """Each step's float32 sum rounds once; a k tile of 24 takes steps of 16 and 8; C starts at its loaded values."""
    a, b = _inputs(64, 64, K, dtype, seed=3)
    a, b = a * 8, b * 8
    c0 = (torch.rand(64, 64, generator=torch.Generator().manual_seed(5)) * 50).to(getattr(torch, dtype))
    c = c0.clone()
    _build(M=64, N=64, K=K, bk=bk, acc=dtype, dtype=dtype)(a, b, c)
    want = _stepped(a, b, c0, bk)
    per_product = _stepped(a, b, c0, bk, step=1)
    ulp = torch.finfo(c.dtype).eps * want.float().abs().clamp(min=1)
    assert ((c.float() - want.float()).abs() <= ulp).all()  # float32 sums in another order: one rounding step apart
    assert ((c.float() - want.float()).abs() < (per_product.float() - want.float()).abs().max()).all()
