"""Source files and spans: the one place that converts between offsets, lines and columns.

A `Span` is data carried by every IR node and every diagnostic. Lines are 1-based; columns are
0-based counts of Unicode code points (not bytes, not UTF-16 units). Renderers add 1 to columns
for humans; the language server converts code points to the negotiated LSP encoding.
"""
from __future__ import annotations

import ast
import io
import re
import sys
import tokenize
from dataclasses import dataclass
from functools import cached_property


@dataclass(frozen=True, order=True)
class Span:
    """A half-open source range: (line, col) inclusive to (end_line, end_col) exclusive."""

    line: int
    col: int
    end_line: int
    end_col: int

    def contains(self, line: int, col: int) -> bool:
        """True when the position (1-based line, 0-based col) lies inside this span."""
        if (line, col) < (self.line, self.col):
            return False
        return (line, col) < (self.end_line, self.end_col) or (line, col) == (self.line, self.col)

    def covers(self, other: "Span") -> bool:
        """True when `other` lies entirely inside this span."""
        return (self.line, self.col) <= (other.line, other.col) and (other.end_line, other.end_col) <= (
            self.end_line,
            self.end_col,
        )

    def size(self) -> tuple[int, int]:
        """A sort key: smaller spans first (lines, then columns)."""
        return (self.end_line - self.line, self.end_col - self.col)


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class SourceFile:
    """Text of one file (saved or unsaved) with line tables and ast-offset conversion."""

    def __init__(self, text: str, path: str = "<string>"):
        self.text = text
        self.path = path

    @cached_property
    def lines(self) -> list[str]:
        """The file's lines without terminators; only \\n, \\r\\n and \\r end a line (as for Python's tokenizer
        and LSP: form feed and U+2028 do not)."""
        lines = _LINE_BREAK.split(self.text)
        if len(lines) > 1 and lines[-1] == "":
            lines.pop()
        return lines

    @cached_property
    def _line_starts(self) -> list[int]:
        return [0] + [m.end() for m in _LINE_BREAK.finditer(self.text)]

    def line_text(self, line: int) -> str:
        """The text of a 1-based line ('' when out of range)."""
        return self.lines[line - 1] if 1 <= line <= len(self.lines) else ""

    def byte_col_to_char(self, line: int, byte_col: int) -> int:
        """Convert an ast UTF-8 byte column on `line` to a code-point column."""
        text = self.line_text(line)
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def span_of(self, node: ast.AST) -> Span:
        """The span of an ast node, with code-point columns."""
        line = getattr(node, "lineno", 1)
        end_line = getattr(node, "end_lineno", None) or line
        col = self.byte_col_to_char(line, getattr(node, "col_offset", 0))
        end_byte = getattr(node, "end_col_offset", None)
        end_col = self.byte_col_to_char(end_line, end_byte) if end_byte is not None else col + 1
        return Span(line, col, end_line, end_col)

    def offset(self, line: int, col: int) -> int:
        """Character offset of a (1-based line, 0-based col) position, clamped to the text."""
        if line < 1:
            return 0
        if line > len(self._line_starts):
            return len(self.text)
        return min(self._line_starts[line - 1] + col, len(self.text))

    def position(self, offset: int) -> tuple[int, int]:
        """The (1-based line, 0-based col) of a character offset."""
        import bisect

        offset = max(0, min(offset, len(self.text)))
        idx = bisect.bisect_right(self._line_starts, offset) - 1
        return idx + 1, offset - self._line_starts[idx]

    def snippet(self, span: Span) -> str:
        """The text covered by a span."""
        return self.text[self.offset(span.line, span.col) : self.offset(span.end_line, span.end_col)]


def span_union(a: Span, b: Span) -> Span:
    """The smallest span covering both."""
    start = min((a.line, a.col), (b.line, b.col))
    end = max((a.end_line, a.end_col), (b.end_line, b.end_col))
    return Span(start[0], start[1], end[0], end[1])


def read_python_source(path: str):
    """The text of a Python file ("-": stdin) as Python reads it (its PEP 263 coding line or UTF-8, universal
    newlines, no BOM), or the exception that stopped it: every path that reads a user's file goes through here."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            with open(path, "rb") as fh:
                data = fh.read()
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding).replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    except LookupError as exc:  # an unknown encoding in the coding cookie
        return SyntaxError(str(exc))
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        return exc
