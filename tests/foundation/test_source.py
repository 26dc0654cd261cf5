"""Spans and SourceFile conversions (code-point columns, offsets, ast nodes)."""
import ast

from tilelang_core.source import SourceFile, Span, span_union


def test_span_of_ascii_node():
    src = SourceFile("x = 1\nfoo(bar)\n")
    call = ast.parse(src.text).body[1].value
    assert src.span_of(call) == Span(2, 0, 2, 8)
    assert src.snippet(src.span_of(call)) == "foo(bar)"


def test_span_of_non_ascii_uses_code_points():
    src = SourceFile("s = 'héllo'; y = z\n")
    name = [n for n in ast.walk(ast.parse(src.text)) if isinstance(n, ast.Name) and n.id == "z"][0]
    span = src.span_of(name)
    assert src.line_text(1)[span.col : span.end_col] == "z"


def test_offset_position_roundtrip_and_clamping():
    src = SourceFile("ab\ncde\n")
    for off in range(len(src.text) + 1):
        assert src.offset(*src.position(off)) == off
    assert src.offset(99, 0) == len(src.text)
    assert src.position(-5) == (1, 0)


def test_span_contains_and_union():
    a, b = Span(1, 2, 1, 5), Span(3, 0, 3, 1)
    assert a.contains(1, 2) and a.contains(1, 4) and not a.contains(1, 5)
    assert span_union(a, b) == Span(1, 2, 3, 1)
    assert span_union(a, b).covers(a) and not a.covers(b)


def test_only_newline_carriage_return_and_crlf_end_lines():
    """Form feed and U+2028 are not line breaks (Python's tokenizer and LSP agree); \r and \r\n are."""
    import ast

    text = "x = 1  # a\u2028b\x0cc\r\ny = 2\rz = 3\n"
    src = SourceFile(text)
    assert src.lines == ["x = 1  # a\u2028b\x0cc", "y = 2", "z = 3"]
    z = ast.parse(text).body[-1]
    assert z.lineno == 3 and src.line_text(z.lineno) == "z = 3"
    assert src.position(src.offset(3, 0)) == (3, 0) and text[src.offset(3, 0)] == "z"
