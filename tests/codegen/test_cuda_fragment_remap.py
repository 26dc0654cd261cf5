"""Fragments read across layouts: T.reduce_* over a 3-D fragment, T.copy between fragments of different layouts
or slices, and a T.Parallel loop that reads a fragment at elements other threads hold (through a shared copy): what
the lowering emits. Numerics (CPU vs torch, and on a GPU) and nvcc: the fuzz_layouts cases of tests/fuzzer_patterns."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source, lower

pytestmark = [pytest.mark.tvm]

KERNELS = """
import tilelang.language as T

def reduce3(t, n):
    @T.prim_func
    def k(R: T.Tensor((t, n, n), "float32"), X: T.Tensor((t, n), "float32"),
          Y1: T.Tensor((t, n), "float32"), Y2: T.Tensor((t, n), "float32")):
        with T.Kernel(1, threads=64) as bx:
            r = T.alloc_fragment((t, n, n), "float32")
            x = T.alloc_fragment((t, n), "float32")
            buf = T.alloc_fragment((t, n, n), "float32")
            y1 = T.alloc_fragment((t, n), "float32")
            y2 = T.alloc_fragment((t, n), "float32")
            T.copy(R, r)
            T.copy(X, x)
            for a, i, j in T.Parallel(t, n, n):
                buf[a, i, j] = r[a, i, j] * x[a, j]
            T.reduce_sum(buf, y1, dim=-1)
            T.reduce_max(buf, y2, dim=-2)
            T.copy(y1, Y1)
            T.copy(y2, Y2)
    return k

def split_rows(s, m):
    @T.prim_func
    def k(L: T.Tensor((s, m), "float32"), O: T.Tensor((m,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            lse = T.alloc_fragment((s, m), "float32")
            row = T.alloc_fragment((m,), "float32")
            acc = T.alloc_fragment((m,), "float32")
            T.copy(L, lse)
            T.clear(acc)
            for k in T.serial(s):
                T.copy(lse[k, :], row)
                for i in T.Parallel(m):
                    acc[i] += row[i] * (k + 1)
            T.copy(acc, O)
    return k

def gemm_columns(m, n, kk):
    @T.prim_func
    def k(A: T.Tensor((m, kk), "float16"), B: T.Tensor((n, kk), "float16"), C: T.Tensor((m, n), "float32"),
          S: T.Tensor((m, 4), "float32"), D: T.Tensor((m, n), "float32")):
        with T.Kernel(1, threads=128) as bx:
            a_s = T.alloc_shared((m, kk), "float16")
            b_s = T.alloc_shared((n, kk), "float16")
            c = T.alloc_fragment((m, n), "float32")
            d = T.alloc_fragment((m, n), "float32")
            part = T.alloc_fragment((m, 4), "float32")
            T.copy(A, a_s)
            T.copy(B, b_s)
            T.gemm(a_s, b_s, c, transpose_B=True, clear_accum=True)
            T.clear(part)
            for jj in T.serial(n // 4):
                for i, j in T.Parallel(m, 4):
                    part[i, j] += c[i, jj * 4 + j] * c[i, jj * 4 + j]
            T.copy(c, d)
            T.copy(part, S)
            T.copy(c, C)
            T.copy(d[0:m, 0:n], D)
    return k

r3 = reduce3(4, 16)
split = split_rows(4, 128)
cols = gemm_columns(64, 64, 32)
"""


def _kernels():
    res = check_source(textwrap.dedent(KERNELS), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels


def test_reduce_over_a_3d_fragment_reads_the_staged_rows():
    src = lower(_kernels()[0], "sm_90a").stages["lowered"]
    assert "// 16 * 16 +" in src  # dim=-2: output row (a, j) reads (a, i, j) at ((row // 16 * 16 + i) * 16 + row % 16)


def test_a_slice_copy_between_distributed_fragments_goes_through_a_shared_stage():
    src = lower(_kernels()[1], "sm_90a").stages["lowered"]
    assert "frag_stage[" in src and "row[r_3] = frag_stage[(k * 128 + " in src


def test_a_parallel_read_of_elements_other_threads_hold_goes_through_shared_memory():
    res = lower(_kernels()[2], "sm_90a")
    assert "# c: wgmma.m64n64" in res.stages["layouts"]
    src = res.stages["lowered"]
    assert "c_shared" in src and src.index("c_shared[") < src.index("for jj in")  # staged once, before the loop
