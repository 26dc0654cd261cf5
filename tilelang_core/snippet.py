"""Source snippets for messages: a span's line with a `^~~~` underline, and the `--> path:line:col` block that
compiler errors carry (shared by `tilelsp check`'s text output and CompileError's message)."""
from __future__ import annotations

from functools import lru_cache

from .source import Span


def _plain(_key: str, text: str) -> str:
    return text


def caret_snippet(text: str, span: Span, paint=None, key: str = "error") -> list[str]:
    """The span's first source line with a `^~~~` underline (empty when the line is not in the text); `paint(key,
    text)` colours the gutter and the marker."""
    paint = paint or _plain
    source_lines = _lines(text)
    if not 1 <= span.line <= len(source_lines):
        return []
    line = source_lines[span.line - 1].rstrip()
    col = min(span.col, len(line))
    end = span.end_col if span.end_line == span.line else len(_strip_comment(line))
    width = max(1, min(end, len(line)) - col)
    prefix = _blank(line[:col])
    width = width if line.isascii() else max(1, len(_blank(line[col : col + width])))
    gutter = len(str(span.line))
    bar = paint("gutter", "|")
    marker = paint(key, "^" + "~" * (width - 1))
    return [f" {paint('gutter', str(span.line))} {bar} {line}", f" {' ' * gutter} {bar} {prefix}{marker}"]


def location_block(path: str, text: str | None, span: Span) -> list[str]:
    """`  --> path:line:col` (1-based column) and, when the text is known, the caret snippet under it."""
    return [f"  --> {path}:{span.line}:{span.col + 1}"] + (caret_snippet(text, span) if text else [])


def _blank(text: str) -> str:
    """Whitespace as wide as `text` on a terminal: tabs kept, East Asian wide characters as two spaces."""
    if text.isascii():
        return "".join("\t" if ch == "\t" else " " for ch in text)
    import unicodedata

    return "".join("\t" if ch == "\t" else "  " if unicodedata.east_asian_width(ch) in "WF" else " " for ch in text)


def _strip_comment(line: str) -> str:
    """`line` without a trailing `# comment` (a `#` outside quotes), right-stripped."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            quote = None if ch == quote and line[i - 1] != "\\" else quote
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return line[:i].rstrip()
    return line


@lru_cache(maxsize=4)
def _lines(text: str) -> list[str]:
    return text.splitlines()
