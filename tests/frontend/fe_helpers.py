"""Helpers for the frontend tests: parse a source string, find statements and diagnostics."""
from __future__ import annotations

import textwrap

from tilelang_core.diagnostics import DiagnosticSink
from tilelang_core.frontend import parse_file
from tilelang_core.ir import nodes as N
from tilelang_core.ir.visitor import walk
from tilelang_core.source import SourceFile

HEADER = "import tilelang\nimport tilelang.language as T\n\n"


def parse(text: str, header: bool = True, instances=None):
    """(kernels, diagnostics) for a dedented source text (with the usual imports unless header=False)."""
    src = (HEADER if header else "") + textwrap.dedent(text)
    sink = DiagnosticSink()
    kernels = parse_file(SourceFile(src, "test_kernel.py"), sink, instances=instances)
    return kernels, sink.items


def errors(diags) -> list:
    """Only error diagnostics, as (code, line) pairs."""
    return [(d.code, d.span.line) for d in diags if d.is_error]


def nodes(func, kind) -> list:
    """Every IR node of a type in a kernel, in pre-order."""
    return [n for n in walk(func.body) if isinstance(n, kind)]


def line_of(text: str, needle: str, header: bool = True) -> int:
    """The 1-based line of the first line containing `needle` (header included)."""
    src = (HEADER if header else "") + textwrap.dedent(text)
    for i, line in enumerate(src.splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(needle)


def launch(func) -> N.Launch:
    """The kernel's launch."""
    assert func.launch is not None
    return func.launch
