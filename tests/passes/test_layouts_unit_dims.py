"""A 1-D fragment indexed `[j]` in a T.Parallel loop over (1, D) is spread over the threads, not replicated.

layernorm's backward (the real TileLang's examples/norm/layernorm.py) accumulates `dgamma[j] += dy * x_hat[i, j]`
over (1, D): each element is reached once, so the accumulator is laid out like `x_hat`. Replicated, every thread
kept all D floats in local memory and published them through shared memory on every row (280x slower on an H200).
"""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source, lower

ACC = textwrap.dedent('''
    import tilelang.language as T

    @T.prim_func
    def acc(X: T.Tensor((8, 1024), "float32"), G: T.Tensor((1024,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            x = T.alloc_fragment((1, 1024), "float32")
            g = T.alloc_fragment((1024,), "float32")
            T.clear(g)
            for k in T.serial(8):
                T.copy(X[k, 0], x)
                for i, j in T.Parallel(1, 1024):
                    g[j] += x[i, j] * x[i, j]
            for j in T.Parallel(1024):
                G[j] = g[j]
''')


def _kernel():
    result = check_source(ACC, "acc.py")
    assert not result.errors, result.errors
    return result.kernels[0]


@pytest.mark.tvm
def test_the_accumulator_is_spread_like_the_tile_it_sums():
    out = lower(_kernel(), "sm_90a")
    assert "# g: generic 1024 over 128 threads" in out.stages["layouts"]
    assert "replicated" not in out.stages["layouts"]
    assert "float g_ptr[8];" in out.source and "g_ptr[1024]" not in out.source


@pytest.mark.tvm
def test_the_accumulator_sums_each_column_on_the_cpu_backend():
    import torch

    from tilelang_core.runtime.jit import JITKernel

    x = torch.randn(8, 1024)
    g = torch.empty(1024)
    JITKernel(_kernel(), target="cpu")(x, g)
    torch.testing.assert_close(g, (x * x).sum(0))
