"""Document text kept exactly as the LSP spec says: lines end only at \\n, \\r\\n or \\r (never at U+2028,
form feed or the other breaks `str.splitlines` knows); columns count code units of the negotiated encoding;
a position past a line's end is that line's end, one past the last line is the document's end; a range whose
end comes before its start is refused without touching the text.
"""
from __future__ import annotations

from tilelsp.features.positions import BREAK, UTF16, units_to_col


class BadRange(ValueError):
    """An edit range the spec does not allow (end before start, or a negative line or column)."""


def _line_bounds(text: str, line: int) -> tuple[int, int] | None:
    """(start, end) offsets of a 0-based line's content, or None when the document has fewer lines."""
    start = 0
    if line > 0:
        for n, m in enumerate(BREAK.finditer(text), 1):
            if n == line:
                start = m.end()
                break
        else:
            return None
    m = BREAK.search(text, start)
    return start, (m.start() if m else len(text))


def offset_of(text: str, line: int, character: int, encoding: str = UTF16) -> int:
    """The string offset of an LSP position, clamped to the line's end and to the document's end."""
    if line < 0 or character < 0:
        raise BadRange(f"negative position ({line}, {character})")
    bounds = _line_bounds(text, line)
    if bounds is None:
        return len(text)
    start, end = bounds
    return start + units_to_col(text[start:end], character, encoding)


def apply_change(text: str, start: tuple[int, int], end: tuple[int, int], new_text: str,
                 encoding: str = UTF16) -> str:
    """The text after replacing the LSP range start..end (each (line, character)) with `new_text`."""
    if end < start:
        raise BadRange(f"range end {end} comes before its start {start}")
    a = offset_of(text, *start, encoding)
    b = offset_of(text, *end, encoding)
    return text[:a] + new_text + text[b:]
