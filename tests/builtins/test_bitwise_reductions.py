"""T.reduce_bitand/bitor/bitxor and T.warp_reduce_bitand/bitor: CPU numerics against torch, CUDA for sm_90a that
nvcc compiles, and a float operand refused at its line."""
from __future__ import annotations

import functools
import textwrap

import pytest

from tilelang_core import check_source

REDUCE = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((16, 32), T.int32), B: T.Tensor((16,), T.int32)):
    with T.Kernel(1, threads=128):
        F = T.alloc_fragment((16, 32), T.int32)
        O = T.alloc_fragment((16,), T.int32)
        T.copy(A, F)
        T.reduce_{op}(F, O, dim=1)
        T.copy(O, B)
"""

WARP = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((64,), T.int64)):
    with T.Kernel(1, threads=64):
        tx = T.get_thread_binding(0)
        v = T.alloc_local((1,), T.int64)
        v[0] = A[tx]
        A[tx] = T.warp_reduce_{op}(v[0])
"""


def _kernel(src: str):
    res = check_source(textwrap.dedent(src), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


def _fold(torch, a, op: str, dim: int):
    fn = {"bitand": torch.bitwise_and, "bitor": torch.bitwise_or, "bitxor": torch.bitwise_xor}[op]
    return functools.reduce(fn, a.unbind(dim))


@pytest.mark.tvm
@pytest.mark.parametrize("op", ["bitand", "bitor", "bitxor"])
def test_tile_bitwise_reductions_on_the_cpu(op):
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a, b = torch.randint(-2**31, 2**31 - 1, (16, 32), dtype=torch.int32), torch.zeros(16, dtype=torch.int32)
    cpu.build(_kernel(REDUCE.format(op=op)))(a, b)
    assert torch.equal(b, _fold(torch, a, op, 1))


@pytest.mark.tvm
@pytest.mark.parametrize("op", ["bitand", "bitor"])
def test_warp_bitwise_reductions_on_the_cpu(op):
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a = torch.randint(-2**62, 2**62, (64,), dtype=torch.int64)
    want = torch.cat([_fold(torch, w, op, 0).expand(32) for w in a.split(32)])
    cpu.build(_kernel(WARP.format(op=op)))(a)
    assert torch.equal(a, want)


@pytest.mark.tvm
@pytest.mark.nvcc
@pytest.mark.parametrize("src", [REDUCE.format(op="bitand"), WARP.format(op="bitor")])
def test_bitwise_reductions_compile_for_sm90a(src):
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    assert compile_cubin(generate(_kernel(src), "sm_90a").source, "sm_90a")[:4] == b"\x7fELF"


def test_a_bitwise_reduction_of_floats_is_refused_at_its_line():
    src = textwrap.dedent(REDUCE.format(op="bitor")).replace("T.int32", "T.float32")
    errs = check_source(src, "<test>").errors
    assert errs and "combines the bits of integers" in errs[0].message and errs[0].span.line == 10
