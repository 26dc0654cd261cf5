"""Tile ops whose region index is read from storage on the CPU backend: a stage counter in a fragment (the build
used to fail in TVM's CompactBufferAllocation) or in a thread's T.alloc_var (the gemm ran once per thread)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

import tilelang_core as tilelang  # noqa: E402
import tilelang_core.language as T  # noqa: E402


@tilelang.jit(out_idx=[-1], target="cpu")
def staged_gemm(counter, M=32, N=32, K=64, bk=16):
    @T.prim_func
    def main(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((2, M, bk), "float32")
            B_s = T.alloc_shared((bk, N), "float32")
            acc = T.alloc_fragment((M, N), "float32")
            if counter == "var":  # a thread's own variable: the kernel is thread-level
                tx = T.get_thread_binding()
                stage = T.alloc_var("int32")
                stage = 0
                T.clear(acc)
                for ko in T.serial(K // bk):
                    T.copy(A[0, ko * bk], A_s[stage, :, :])
                    T.copy(B[ko * bk, 0], B_s)
                    T.gemm(A_s[stage, :, :], B_s, acc)
                    if tx == 0:
                        stage = (stage + 1) % 2
                    else:
                        stage = (stage + 1) % 2
            else:
                slot = T.alloc_fragment((1,), "int32")
                slot[0] = 0
                T.clear(acc)
                for ko in T.serial(K // bk):
                    T.copy(A[0, ko * bk], A_s[slot[0], :, :])
                    T.copy(B[ko * bk, 0], B_s)
                    T.gemm(A_s[slot[0], :, :], B_s, acc)
                    slot[0] = (slot[0] + 1) % 2
            T.copy(acc, C)
    return main


@pytest.mark.parametrize("counter", ["var", "fragment"])
def test_gemm_on_a_stage_read_from_storage_runs_once_and_builds(counter):
    a, b = torch.randn(32, 64), torch.randn(64, 32)
    torch.testing.assert_close(staged_gemm(counter)(a, b), a @ b, rtol=1e-4, atol=1e-4)
