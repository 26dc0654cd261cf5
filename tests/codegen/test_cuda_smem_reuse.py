"""Shared buffers whose lifetimes do not overlap share bytes when laying them out one after another would not fit."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source, lower
from tilelang_core.codegen.cuda.smem import packed, sequential

SRC = textwrap.dedent('''
    import tilelang.language as T

    @T.prim_func
    def two_phases(A: T.Tensor((1024, 1024), "float32"), B: T.Tensor((1024, 1024), "float32")):
        with T.Kernel(8, threads=128) as bx:
            X = T.alloc_shared((128, {n}), "float32")
            Y = T.alloc_shared((128, {n}), "float32")
            T.copy(A[bx * 128, 0], X)
            T.copy(X, B[bx * 128, 0])
            T.copy(A[bx * 128, 512], Y)
            T.copy(Y, B[bx * 128, 512])
''')


def test_packing_keeps_buffers_live_together_apart():
    assert sequential([100, 100, 50], 128) == [0, 128, 256]
    offs = packed([300, 200, 100], [(0, 2), (3, 5), (1, 4)], 128)
    assert offs[0] == 0 and offs[1] == 0  # never live together: same bytes
    assert offs[2] >= 384  # live with both: after the largest, aligned
    assert packed([10, 10], [None, (0, 1)], 128) == [0, 128]  # None is live everywhere


def _lowered(n: int):
    result = check_source(SRC.format(n=n), "two_phases.py")
    assert not [d for d in result.diagnostics if d.severity.name == "ERROR"]
    return lower(result.kernels[0], "sm_90a")


@pytest.mark.tvm
def test_small_kernels_keep_buffers_one_after_another():
    out = _lowered(64)
    assert out.smem_bytes == 2 * 128 * 64 * 4


@pytest.mark.tvm
@pytest.mark.nvcc
def test_buffers_used_one_after_another_share_bytes_when_the_sum_does_not_fit():
    from tilelang_core.runtime.artifact import compile_cubin

    out = _lowered(112)  # 2 x 56 KiB > 99 KiB (sm_86); each alone fits
    assert out.smem_bytes == 2 * 128 * 112 * 4  # sm_90a: both fit one after another
    big = _lowered(240)  # 2 x 120 KiB > 227 KiB (sm_90a)
    assert big.smem_bytes == 128 * 240 * 4
    assert compile_cubin(big.source, "sm_90a")
