"""Live mode (`parse_captured`): the JIT's path, with a real environment and spans in this file."""
from __future__ import annotations

import inspect

import tilelang_core.language as T
from tilelang_core.diagnostics import DiagnosticSink
from tilelang_core.frontend import parse_captured
from tilelang_core.ir import nodes as N
from tilelang_core.ir.arith import as_int, shape_ints
from tilelang_core.ir.visitor import walk

BLOCK = 32


def scale_factory(n, factor=2.0, dtype="float32"):
    @T.macro
    def body(src, dst, i):
        dst[i] = src[i] * factor

    @T.prim_func
    def scale(A: T.Tensor((n,), dtype), B: T.Tensor((n,), dtype)):
        with T.Kernel(T.ceildiv(n, BLOCK), threads=BLOCK) as bx:
            for i in T.Parallel(BLOCK):
                body(A, B, bx * BLOCK + i)

    return scale


def broken_factory(n):
    @T.prim_func
    def broken(A: T.Tensor((n,), "float32")):
        with T.Kernel(1) as bx:  # noqa: F841
            T.copy(A, not_defined_anywhere)  # noqa: F821  # tilelsp: ignore[undefined-name]

    return broken


def _line(fn, needle: str) -> int:
    lines, first = inspect.getsourcelines(fn)
    return first + next(i for i, line in enumerate(lines) if needle in line)


def test_live_values_and_macro_from_closure():
    sink = DiagnosticSink()
    func = parse_captured(scale_factory(128).captured, sink, out_idx=[1], factory="scale_factory",
                          instance="scale_factory(n=128)")
    assert sink.items == []
    assert func.name == "scale" and func.out_idx == (1,) and func.instance == "scale_factory(n=128)"
    assert [shape_ints(p.shape) for p in func.params] == [(128,), (128,)]
    assert as_int(func.launch.grid[0]) == 4 and as_int(func.launch.threads[0]) == 32
    (store,) = [n for n in walk(func.body) if isinstance(n, N.Store)]
    assert store.buffer is func.params[1]
    assert store.span.line == _line(scale_factory, "dst[i] = src[i] * factor")


def test_live_spans_are_in_the_defining_file():
    func = parse_captured(scale_factory(64).captured, DiagnosticSink())
    assert func.source_path == __file__
    assert func.name_span.line == _line(scale_factory, "def scale(")
    assert func.name_span.col == 8
    copy_line = _line(scale_factory, "with T.Kernel")
    assert func.launch.span.line == copy_line and func.launch.span.col == 13


def test_live_errors_point_into_this_file():
    sink = DiagnosticSink()
    func = parse_captured(broken_factory(8).captured, sink)
    assert func is not None
    (d,) = sink.items
    assert d.code == "undefined-name" and d.span.line == _line(broken_factory, "not_defined_anywhere")
    assert d.span.col == 22


def test_live_values_of_other_numeric_types():
    import numpy as np

    from tilelang_core.frontend.values import from_live

    assert from_live(np.int64(7)) == 7 and type(from_live(np.int64(7))) is int
    assert from_live(np.float32(0.5)) == 0.5
    func = parse_captured(scale_factory(np.int64(96)).captured, DiagnosticSink())
    assert shape_ints(func.params[0].shape) == (96,)
