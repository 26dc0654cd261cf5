"""Span <-> LSP Range conversion in UTF-16, UTF-8 and UTF-32, with non-ASCII text and clamping."""
from __future__ import annotations

from lsprotocol import types

from tilelang_core.source import SourceFile, Span
from tilelsp.features.positions import (UTF8, UTF16, UTF32, col_to_units, encoding_name, line_count, lsp_lines,
                               position_to_point, range_to_span, span_to_range, units_to_col)

LINE = 'x = "é😀"; T.copy(A, B)'  # é: 1 UTF-16 unit / 2 UTF-8 bytes; 😀: 2 UTF-16 units / 4 UTF-8 bytes


def test_ascii_columns_are_identity():
    for enc in (UTF8, UTF16, UTF32):
        assert col_to_units("T.copy(A, B)", 6, enc) == 6
        assert units_to_col("T.copy(A, B)", 6, enc) == 6


def test_non_ascii_columns_per_encoding():
    col = LINE.index("T.copy")  # 10 code points
    assert col == 10
    assert col_to_units(LINE, col, UTF32) == 10
    assert col_to_units(LINE, col, UTF16) == 11
    assert col_to_units(LINE, col, UTF8) == 14
    for enc in (UTF8, UTF16, UTF32):
        assert units_to_col(LINE, col_to_units(LINE, col, enc), enc) == col


def test_mid_surrogate_rounds_down():
    emoji = LINE.index("😀")
    assert units_to_col(LINE, col_to_units(LINE, emoji, UTF16) + 1, UTF16) == emoji


def test_span_roundtrip_and_clamping():
    src = SourceFile(f"import tilelang\n{LINE}\n")
    span = Span(2, 10, 2, 16)
    rng = span_to_range(span, src, UTF16)
    assert (rng.start.line, rng.start.character, rng.end.character) == (1, 11, 17)
    assert range_to_span(rng, src, UTF16) == span
    far = types.Position(line=99, character=500)
    assert position_to_point(far, src, UTF16) == (3, 0)  # past the end: the end of the (empty) last line
    assert position_to_point(types.Position(line=1, character=10_000), src, UTF8) == (2, len(LINE))


def test_encoding_name_defaults_to_utf16():
    assert encoding_name(None) == UTF16
    assert encoding_name(types.PositionEncodingKind.Utf8) == UTF8
    assert encoding_name("latin-1") == UTF16


def test_only_lsp_line_breaks_count():
    src = SourceFile("a\u2028b\x0cc\r\nd\re\nf")
    assert lsp_lines(src.text) == ["a\u2028b\x0cc", "d", "e", "f"] and line_count(src) == 4
    assert position_to_point(types.Position(line=1, character=0), src, UTF16) == (2, 0)
    assert span_to_range(Span(4, 1, 4, 1), src, UTF16).start == types.Position(line=3, character=1)
