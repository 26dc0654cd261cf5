"""Barriers around serial loops over shared memory: a loop that only writes (or only reads) shared memory gets
one __syncthreads() before it, none inside; a loop that reads what it writes syncs on its back edge."""
from __future__ import annotations

import re

import pytest

pytestmark = pytest.mark.tvm

SOURCE = '''
import tilelang_core.language as T


@T.prim_func
def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        S = T.alloc_shared((4, 128), "float32")
        acc = T.alloc_local((1,), "float32")
        for i in T.serial(4):
            for j in T.serial(2):
                S[i, tx] = A[tx] * (i + j)
        acc[0] = 0.0
        for i in T.serial(4):
            for j in T.serial(2):
                acc[0] += S[i, (tx + j) % 128]
        for i in T.serial(4):
            S[i, tx] = S[(i + 1) % 4, tx] + acc[0]
        B[tx] = S[0, tx]
'''


def test_write_only_and_read_only_loops_sync_once_before_them(tmp_path):
    from tilelang_core import check_source
    from tilelang_core.lowering import lower

    kernel = check_source(SOURCE, str(tmp_path / "k.py")).kernels[0]
    cuda = lower(kernel, "sm_90a").source
    body = cuda[cuda.index("__global__ void"):]
    loops = re.split(r"for \(int i", body)
    assert len(loops) == 4
    # before the write loop: nothing to wait for; before the read loop and the read-write loop: one barrier each
    assert [part.count("__syncthreads()") for part in loops[:3]] == [0, 1, 1]
    write_loop, read_loop, rw_loop = loops[1], loops[2], loops[3]
    assert "__syncthreads()" not in write_loop.split("acc")[0]  # none inside the write-only nest
    assert rw_loop.count("__syncthreads()") >= 2  # the loop reading what it writes syncs inside (its back edge)
