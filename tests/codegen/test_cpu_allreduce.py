"""CPU numerics of thread all-reduces (TVM's T.tvm_thread_allreduce, T.warp_reduce_*) against torch: the CPU
backend combines each thread's group in a phase of its own (codegen/cpu/allreduce.py)."""
from __future__ import annotations

import pytest
from test_cpu_backend import build_src

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

GEMV = """
import tilelang
import tilelang.language as T

@T.prim_func
def gemv(A: T.Tensor((256,), "float16"), B: T.Tensor((64, 256), "float16"), C: T.Tensor((64,), "float32"),
         M: T.Tensor((64,), "float32")):
    with T.Kernel(64 // 4, threads=(4, 16)) as bn:
        tn = T.get_thread_binding(0)
        tk = T.get_thread_binding(1)
        acc = T.alloc_local((1,), "float32")
        red = T.alloc_local((1,), "float32")
        big = T.alloc_local((1,), "float32")
        T.clear(acc)
        for bk in T.serial(256 // 64):
            for k in T.serial(4):
                acc[0] += T.cast(A[bk * 64 + tk * 4 + k], "float32") * T.cast(B[bn * 4 + tn, bk * 64 + tk * 4 + k], "float32")
        with T.attr(T.comm_reducer(lambda x, y: x + y, [T.float32(0)]), "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), acc[0], True, red[0], tk, dtype="handle"))
        with T.attr(T.comm_reducer(lambda x, y: T.max(x, y), [T.float32(-1e30)]), "reduce_scope", T.reinterpret(T.uint64(0), dtype="handle")):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), acc[0], True, big[0], tk, dtype="handle"))
        if tk == 0:
            C[bn * 4 + tn] = red[0]
            M[bn * 4 + tn] = big[0]
"""

WARP_SUM = """
import tilelang
import tilelang.language as T

@T.prim_func
def rowsum(A: T.Tensor((4, 64), "float32"), S: T.Tensor((4, 2), "float32"), X: T.Tensor((4, 64), "float32")):
    with T.Kernel(4, threads=64) as bx:
        tx = T.get_thread_binding()
        v = T.alloc_local((1,), "float32")
        v[0] = A[bx, tx]
        s = T.warp_reduce_sum(v[0])
        m = T.warp_reduce_max(v[0])
        X[bx, tx] = m
        if tx % 32 == 0:
            S[bx, tx // 32] = s
"""


def test_tvm_thread_allreduce_over_one_thread_axis_sum_and_max():
    mod = build_src(GEMV)
    a, b = torch.randn(256).half(), torch.randn(64, 256).half()
    c, m = torch.zeros(64), torch.zeros(64)
    mod(a, b, c, m)
    torch.testing.assert_close(c, b.float() @ a.float(), rtol=1e-4, atol=1e-3)
    parts = (b.float() * a.float()).view(64, 4, 16, 4).sum(3).sum(1)  # each tk's partial: bk and k summed
    torch.testing.assert_close(m, parts.max(1).values, rtol=1e-4, atol=1e-4)


def test_warp_reduce_sum_and_max_per_warp():
    mod = build_src(WARP_SUM)
    a = torch.randn(4, 64)
    s, x = torch.zeros(4, 2), torch.zeros(4, 64)
    mod(a, s, x)
    torch.testing.assert_close(s, a.view(4, 2, 32).sum(2), rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(x, a.view(4, 2, 32).max(2, keepdim=True).values.expand(4, 2, 32).reshape(4, 64))


PIPELINED_DEQUANT = """
import tilelang
import tilelang.language as T

@T.prim_func
def mm(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 16), "float16")
        B_s = T.alloc_shared((64, 16), "float16")
        B_d = T.alloc_shared((64, 16), "float16")
        acc = T.alloc_fragment((64, 64), "float32")
        tx = T.get_thread_binding()
        T.clear(acc)
        for k in T.Pipelined(4, num_stages=2):
            T.copy(A[0, k * 16], A_s)
            T.copy(B[0, k * 16], B_s)
            for i in T.serial(8):
                B_d[(i * 128 + tx) // 16, (i * 128 + tx) % 16] = B_s[(i * 128 + tx) // 16, (i * 128 + tx) % 16] * 2
            T.gemm(A_s, B_d, acc, transpose_B=True)
        T.copy(acc, C)
"""


def test_thread_statements_in_a_loop_with_tile_ops_run_the_tile_ops_once():  # dequant_gemm_fine_grained
    mod = build_src(PIPELINED_DEQUANT)
    a, b = torch.randn(64, 64).half(), torch.randn(64, 64).half()
    c = torch.zeros(64, 64)
    mod(a, b, c)
    torch.testing.assert_close(c, a.float() @ (2 * b.float()).T, rtol=1e-3, atol=1e-3)
