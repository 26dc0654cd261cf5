"""Warp shuffles and shared-memory exchanges without an explicit barrier on the CPU backend (codegen/cpu/simt.py):
a shuffle reads the source lane's value before any lane overwrites it, and a run of per-thread statements ends
where one reads shared memory another thread wrote (TileLang inserts that __syncthreads() itself); vs torch."""
from __future__ import annotations

import pytest
from test_cpu_backend import build_src

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

BUTTERFLY = """
import tilelang
import tilelang.language as T

@T.prim_func
def butterfly(A: T.Tensor((64, 4), "float32"), B: T.Tensor((64, 4), "float32"), X: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as _:
        tx = T.get_thread_binding(0)
        v = T.alloc_local((4,), "float32")
        other = T.alloc_local((4,), "float32")
        for j in T.serial(4):
            v[j] = A[tx, j]
        for i in T.serial(5):
            partner = tx ^ (1 << i)
            for j in T.serial(4):
                other[j] = T.tvm_warp_shuffle(0xFFFFFFFF, v[j], partner % 32, 32, 32)
                v[j] = v[j] + other[j]
        for j in T.serial(4):
            B[tx, j] = v[j]
        x = T.alloc_local((1,), "float32")
        x[0] = A[tx, 0]
        x[0] = x[0] + T.shfl_xor(x[0], 1)
        X[tx] = x[0]
"""

SWAP = """
import tilelang
import tilelang.language as T

@T.prim_func
def swap(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as _:
        tx = T.get_thread_binding(0)
        s = T.alloc_shared((128,), "float32")
        v = T.alloc_local((1,), "float32")
        v[0] = A[tx]
        for r in T.serial(2):
            s[tx] = v[0] + r
            v[0] = s[127 - tx]
        B[tx] = v[0]
"""


def test_warp_shuffles_read_the_source_lane_before_it_is_overwritten():
    a = torch.randn(64, 4)
    b, x = torch.zeros(64, 4), torch.zeros(64)
    build_src(BUTTERFLY)(a, b, x)
    sums = a.reshape(2, 32, 4).sum(1, keepdim=True).expand(2, 32, 4).reshape(64, 4)  # an all-reduce per warp
    torch.testing.assert_close(b, sums, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(x, a[:, 0] + a[torch.arange(64) ^ 1, 0])


def test_a_shared_exchange_without_a_barrier_sees_every_threads_write():
    a, b = torch.randn(128), torch.zeros(128)
    build_src(SWAP)(a, b)
    torch.testing.assert_close(b, a + 1)  # swapped twice, +0 then +1
