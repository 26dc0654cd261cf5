"""A lambda picked from a dict by a compile-time key and called in a kernel (`OPS[op](a, b)`) is inlined like a
helper function: in the checker (its ast.Lambda) and in the JIT (the live lambda found in this file, two lambdas on
one line told apart), with the fp8 max/min/clamp it computes right on the CPU and compiled for sm_90a."""
from __future__ import annotations

import textwrap

import pytest

import tilelang_core.language as T
from tilelang_core import check_source
from tilelang_core.diagnostics import DiagnosticSink
from tilelang_core.frontend import parse_captured
from tilelang_core.ir import nodes as N
from tilelang_core.ir.visitor import walk

SAME_LINE = (lambda a, b: a + b, lambda a, b: a * b)  # noqa: E731

SRC = """
import tilelang.language as T

OPS = {{"max": lambda a, b: T.max(a, b), "min": lambda a, b: T.min(a, b),
       "clamp": lambda a, b: T.clamp(a, T.cast(-1.0, T.{dt}), T.cast(1.0, T.{dt}))}}

@T.prim_func
def k(A: T.Tensor((128,), T.{dt}), B: T.Tensor((128,), T.{dt}), C: T.Tensor((128,), T.{dt})):
    with T.Kernel(1, threads=32):
        for i in T.Parallel(32):
            for v in T.vectorized(4):
                C[i * 4 + v] = OPS["{op}"](A[i * 4 + v], B[i * 4 + v])
"""


def _kernel(dt: str, op: str):
    res = check_source(textwrap.dedent(SRC.format(dt=dt, op=op)), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


def _pair_factory(which: int):
    @T.prim_func
    def pair(A: T.Tensor((8,), T.float32), B: T.Tensor((8,), T.float32)):
        with T.Kernel(1, threads=8):
            for i in T.Parallel(8):
                B[i] = SAME_LINE[which](A[i], A[i])

    return pair


@pytest.mark.parametrize("which,op", [(0, "+"), (1, "*")])
def test_live_lambdas_on_one_line_are_told_apart(which, op):
    sink = DiagnosticSink()
    func = parse_captured(_pair_factory(which).captured, sink)
    assert sink.items == []
    (store,) = [n for n in walk(func.body) if isinstance(n, N.Store)]
    assert isinstance(store.value, N.BinOp) and store.value.op == op


@pytest.mark.tvm
@pytest.mark.parametrize("dt", ["float8_e4m3", "float8_e5m2"])
@pytest.mark.parametrize("op", ["max", "min", "clamp"])
def test_fp8_ops_through_a_dict_of_lambdas_on_the_cpu(dt, op):
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    tdt = getattr(torch, dt + ("fn" if dt == "float8_e4m3" else ""))
    a, b = (torch.randint(-4, 5, (128,), generator=torch.Generator().manual_seed(s)).float() for s in (1, 2))
    c = torch.empty(128, dtype=tdt)
    cpu.build(_kernel(dt, op))(a.to(tdt), b.to(tdt), c)
    ref = {"max": torch.maximum(a, b), "min": torch.minimum(a, b), "clamp": a.clamp(-1.0, 1.0)}[op]
    assert torch.equal(c.float(), ref)


@pytest.mark.tvm
@pytest.mark.nvcc
@pytest.mark.parametrize("dt", ["float8_e4m3", "float8_e5m2", "float8_e4m3fn"])
def test_fp8_ops_through_a_dict_of_lambdas_compile_for_sm90a(dt):
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    for op in ("max", "min", "clamp"):
        ck = generate(_kernel(dt, op), "sm_90a")
        assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"
