"""T.cummax beside T.cumsum: CPU numerics against torch on shared tiles and fragments, and CUDA for sm_90a (a
distributed fragment staged through shared memory) that nvcc compiles."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

pytestmark = pytest.mark.tvm

SCAN = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((64, 32), T.float32), B: T.Tensor((64, 32), T.float32)):
    with T.Kernel(1, threads=128):
        S = T.alloc_shared((64, 32), T.float32)
        F = T.alloc_fragment((64, 32), T.float32)
        T.copy(A, S)
        T.copy(S, F)
        T.{op}({src}, dim={dim}, reverse={reverse})
        T.copy({src}, B)
"""


def _kernel(src: str):
    res = check_source(textwrap.dedent(src), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


@pytest.mark.parametrize("src", ["S", "F"])
@pytest.mark.parametrize("dim,reverse", [(0, False), (1, True)])
def test_cummax_on_the_cpu_matches_torch(src, dim, reverse):
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    mod = cpu.build(_kernel(SCAN.format(op="cummax", src=src, dim=dim, reverse=reverse)))
    a, b = torch.randn(64, 32), torch.zeros(64, 32)
    mod(a, b)
    x = a.flip(dims=[dim]) if reverse else a
    ref = x.cummax(dim=dim).values
    torch.testing.assert_close(b, ref.flip(dims=[dim]) if reverse else ref)


@pytest.mark.nvcc
@pytest.mark.parametrize("op", ["cumsum", "cummax"])
def test_fragment_scans_compile_for_sm90a(op):
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(_kernel(SCAN.format(op=op, src="F", dim=1, reverse=True)), "sm_90a")
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"
