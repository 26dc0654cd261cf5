"""Per-kernel parse context: where spans come from (file or captured function) and where diagnostics go."""
from __future__ import annotations

import ast
from dataclasses import dataclass

from ..diagnostics import DiagnosticSink
from ..source import SourceFile, Span


@dataclass
class SourceMapper:
    """Maps ast positions of a (possibly dedented) source text to the user's file coordinates."""

    source: SourceFile
    line_offset: int = 0
    col_offset: int = 0

    def __post_init__(self):
        self._ascii = self.source.text.isascii()

    def span(self, node) -> Span:
        """The span of an ast node in the user's file."""
        if self._ascii and getattr(node, "end_col_offset", None) is not None:
            lo, co = self.line_offset, self.col_offset
            return Span(node.lineno + lo, node.col_offset + co, node.end_lineno + lo, node.end_col_offset + co)
        s = self.source.span_of(node)
        if not (self.line_offset or self.col_offset):
            return s
        return Span(s.line + self.line_offset, s.col + self.col_offset, s.end_line + self.line_offset,
                    s.end_col + self.col_offset)


@dataclass
class Ctx:
    """What every statement of one kernel instance needs: the span mapper, the sink and labels."""

    mapper: SourceMapper
    sink: DiagnosticSink
    kernel: str
    instance: str = ""
    eager: bool = False

    def span(self, node) -> Span:
        """The user's span of an ast node (or of a Span already computed)."""
        if isinstance(node, Span):
            return node
        if node is None or not hasattr(node, "lineno"):
            return Span(1, 0, 1, 0)
        return self.mapper.span(node)

    def emit(self, code: str, message: str, span: Span, **kw):
        """Record a diagnostic tagged with this kernel and instance."""
        return self.sink.emit(code, message, span, kernel=self.kernel, instance=self.instance or None, **kw)


def def_name_span(mapper: SourceMapper, fn: ast.FunctionDef) -> Span:
    """The span of a function's name in its `def` line."""
    line = fn.lineno
    text = mapper.source.line_text(line)
    start = text.find(fn.name, mapper.source.byte_col_to_char(line, fn.col_offset))
    start = start if start >= 0 else 0
    span = Span(line, start, line, start + len(fn.name))
    return Span(span.line + mapper.line_offset, span.col + mapper.col_offset,
                span.end_line + mapper.line_offset, span.end_col + mapper.col_offset)


def def_span(mapper: SourceMapper, fn: ast.FunctionDef) -> Span:
    """The span of a function's `def` line (from `def` to the end of the header line)."""
    s = mapper.span(fn)
    line_len = len(mapper.source.line_text(fn.lineno))
    return Span(s.line, s.col, s.line, line_len + mapper.col_offset)
