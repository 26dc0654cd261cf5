"""A lambda handed to a kernel factory and called in the kernel body (`op(A_shared, B)`, TileLang's tests pass
`lambda A, B, C: T.wgmma_gemm(A, B, C, ...)` this way) is inlined like a helper function: its body is the value."""
from __future__ import annotations

import pytest

import tilelang_core as tilelang
import tilelang_core.language as T

pytestmark = pytest.mark.tvm


def _kernel(op, scale):
    @T.prim_func
    def main(A: T.Tensor((64,), T.float32), B: T.Tensor((64,), T.float32)):
        with T.Kernel(1, threads=64):
            S = T.alloc_shared((64,), T.float32)
            T.copy(A, S)
            for i in T.Parallel(64):
                B[i] = scale(S[i])
            op(S, B)

    return main


def test_lambdas_called_in_a_kernel_are_inlined():
    torch = pytest.importorskip("torch")
    double, keep = (lambda x: x * 2.0), (lambda src, dst: T.copy(src[0:32], dst[0:32]))  # two on one line
    kernel = tilelang.compile(_kernel(keep, double), target="cpu")
    a, b = torch.arange(64, dtype=torch.float32), torch.zeros(64)
    kernel(a, b)
    assert torch.equal(b, torch.cat([a[:32], a[32:] * 2]))
