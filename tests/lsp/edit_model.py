"""A reference model of LSP document sync and a generator of random incremental edits, shared by the
bounded fuzz test (tests/lsp/test_sync_fuzz.py) and the long run (benchmarks/fuzz_lsp_edits.py).

The model works on the encoded code units (UTF-16 / UTF-8 / UTF-32), not on the server's line splitting:
a line ends only at \\n, \\r\\n or \\r; a character past the line's end is the line's end; a line past the
last one is the document's end; a position inside a character rounds down to its start; a range whose end
comes before its start changes nothing.
"""
from __future__ import annotations

import random
from array import array

from lsprotocol import types

_CODEC = {"utf-16": ("utf-16-le", "H"), "utf-8": ("utf-8", "B"), "utf-32": ("utf-32-le", "I")}
CR, LF = 0x0D, 0x0A
PIECES = ["x", "T", " ", "=", "1", "(", ")", "\t", "\n", "\r\n", "\r", "\u2028", "\u2029", "\x0c", "\x0b",
          "\x85", "\x1c", "é", "€", "😀", "𝔘", "\ufeff", "tilelang", "# ", "def f():\n    "]


def _units(text: str, encoding: str) -> array:
    codec, code = _CODEC[encoding]
    return array(code, text.encode(codec))


def _text(units: array, encoding: str) -> str:
    return units.tobytes().decode(_CODEC[encoding][0])


def _line_starts(units: array) -> list[int]:
    starts, i, n = [0], 0, len(units)
    while i < n:
        if units[i] == CR:
            i += 2 if i + 1 < n and units[i + 1] == LF else 1
            starts.append(i)
        elif units[i] == LF:
            i += 1
            starts.append(i)
        else:
            i += 1
    return starts


def _content_end(units: array, starts: list[int], line: int) -> int:
    if line + 1 >= len(starts):
        return len(units)
    end = starts[line + 1]
    if end >= 2 and units[end - 2] == CR and units[end - 1] == LF:
        return end - 2
    return end - 1


def _is_continuation(units: array, i: int, encoding: str) -> bool:
    if i >= len(units):
        return False
    u = units[i]
    return (0xDC00 <= u <= 0xDFFF) if encoding == "utf-16" else (encoding == "utf-8" and 0x80 <= u <= 0xBF)


def _offset(units: array, starts: list[int], line: int, character: int, encoding: str) -> int:
    if line >= len(starts):
        return len(units)
    i = min(starts[line] + character, _content_end(units, starts, line))
    while i > starts[line] and _is_continuation(units, i, encoding):
        i -= 1
    return i


def apply(text: str, change, encoding: str = "utf-16") -> str:
    """The model's text after one content change (whole-document or ranged)."""
    rng = getattr(change, "range", None)
    if rng is None:
        return change.text
    (sl, sc), (el, ec) = (rng.start.line, rng.start.character), (rng.end.line, rng.end.character)
    if (el, ec) < (sl, sc):
        return text
    units = _units(text, encoding)
    starts = _line_starts(units)
    a, b = _offset(units, starts, sl, sc, encoding), _offset(units, starts, el, ec, encoding)
    return _text(units[:a], encoding) + change.text + _text(units[b:], encoding)


def _snippet(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.choice((0, 1, 1, 2, 3, 6))))


def _position(rng: random.Random, text: str, encoding: str) -> types.Position:
    units = _units(text, encoding)
    starts = _line_starts(units)
    line = rng.randrange(len(starts) + 2)  # sometimes past the last line
    width = _content_end(units, starts, line) - starts[line] if line < len(starts) else 0
    return types.Position(line=line, character=rng.randrange(width + 4))  # sometimes past the line's end


def random_change(rng: random.Random, text: str, encoding: str = "utf-16"):
    """One random content change for `text`: mostly ranged edits (past-end, mid-character and reversed
    ranges included), now and then a whole-document replacement."""
    if rng.random() < 0.02:
        return types.TextDocumentContentChangeWholeDocument(text=_snippet(rng) * rng.randrange(1, 4))
    start = _position(rng, text, encoding)
    end = start if rng.random() < 0.3 else _position(rng, text, encoding)
    if rng.random() < 0.85 and (end.line, end.character) < (start.line, start.character):
        start, end = end, start  # most ranges are well-formed; the rest stay reversed
    return types.TextDocumentContentChangePartial(range=types.Range(start=start, end=end), text=_snippet(rng))
