"""Span <-> LSP Range conversion in the negotiated position encoding (UTF-16, UTF-8 or UTF-32).

A `Span` counts columns in Unicode code points with 1-based lines; LSP counts 0-based lines and
columns in the negotiated code units. Out-of-range positions are clamped, never raised on.
"""
from __future__ import annotations

import re

from lsprotocol import types

from tilelang_core.source import SourceFile, Span

UTF8, UTF16, UTF32 = "utf-8", "utf-16", "utf-32"
BREAK = re.compile(r"\r\n|\r|\n")  # the only line breaks LSP knows


def lsp_lines(text: str) -> list[str]:
    """A text's lines without their breaks, split only where LSP ends lines: \\n, \\r\\n and \\r (never at
    U+2028, form feed or the other breaks `str.splitlines` knows)."""
    return BREAK.split(text)


def text_of_line(source: SourceFile, line: int) -> str:
    """The text of a 1-based LSP line of `source` ('' when out of range)."""
    lines = source.__dict__.get("_lsp_lines")
    if lines is None:
        lines = source.__dict__["_lsp_lines"] = lsp_lines(source.text)
    return lines[line - 1] if 1 <= line <= len(lines) else ""


def line_count(source: SourceFile) -> int:
    """The number of LSP lines of `source`."""
    text_of_line(source, 1)
    return len(source.__dict__["_lsp_lines"])


def encoding_name(encoding) -> str:
    """Normalise a PositionEncodingKind (or None, or a string) to 'utf-8' | 'utf-16' | 'utf-32'."""
    value = getattr(encoding, "value", encoding) or UTF16
    return value if value in (UTF8, UTF16, UTF32) else UTF16


def _units(ch: str, encoding: str) -> int:
    if encoding == UTF32:
        return 1
    cp = ord(ch)
    if encoding == UTF16:
        return 2 if cp > 0xFFFF else 1
    return 1 if cp < 0x80 else 2 if cp < 0x800 else 3 if cp < 0x10000 else 4


def col_to_units(line_text: str, col: int, encoding: str = UTF16) -> int:
    """Code-point column on a line -> column in `encoding` code units."""
    col = max(0, col)
    prefix = line_text[:col]
    if prefix.isascii() or encoding == UTF32:
        return len(prefix) + max(0, col - len(line_text))
    return sum(_units(ch, encoding) for ch in prefix) + max(0, col - len(line_text))


def units_to_col(line_text: str, units: int, encoding: str = UTF16) -> int:
    """Column in `encoding` code units -> code-point column (clamped to the line; mid-character rounds down)."""
    if units <= 0:
        return 0
    if line_text.isascii() or encoding == UTF32:
        return min(units, len(line_text))
    seen = 0
    for i, ch in enumerate(line_text):
        seen += _units(ch, encoding)
        if seen > units:
            return i
    return len(line_text)


def span_to_range(span: Span, source: SourceFile, encoding: str = UTF16) -> types.Range:
    """A Span (1-based lines, code points) as an LSP Range in `encoding`."""
    start = types.Position(max(0, span.line - 1), col_to_units(text_of_line(source, span.line), span.col, encoding))
    end = types.Position(max(0, span.end_line - 1), col_to_units(text_of_line(source, span.end_line), span.end_col, encoding))
    return types.Range(start, end)


def position_to_point(position: types.Position, source: SourceFile, encoding: str = UTF16) -> tuple[int, int]:
    """An LSP Position as (1-based line, code-point col), clamped to the document."""
    nlines = line_count(source)
    line = min(max(position.line, 0), max(nlines - 1, 0)) + 1
    if position.line >= nlines:
        return line, len(text_of_line(source, line))
    return line, units_to_col(text_of_line(source, line), position.character, encoding)


def range_to_span(rng: types.Range, source: SourceFile, encoding: str = UTF16) -> Span:
    """An LSP Range as a Span (clamped)."""
    line, col = position_to_point(rng.start, source, encoding)
    end_line, end_col = position_to_point(rng.end, source, encoding)
    return Span(line, col, end_line, end_col)
