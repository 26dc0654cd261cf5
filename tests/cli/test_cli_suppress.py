"""Inline suppression comments and select/ignore filtering (tilelang_core.suppress), on hand-made diagnostics."""
from __future__ import annotations

from tilelang_core.diagnostics import Diagnostic, Severity
from tilelang_core.source import SourceFile, Span
from tilelang_core.suppress import ALL, collect, filter_diagnostics


def diag(code: str, line: int, col: int = 4) -> Diagnostic:
    return Diagnostic(code, Severity.ERROR, f"{code} here", Span(line, col, line, col + 3))


def codes_left(text: str, diags, **kw) -> list[tuple[str, int]]:
    return [(d.code, d.span.line) for d in filter_diagnostics(SourceFile(text), diags, **kw)]


def test_line_comment_with_codes_suppresses_only_those_codes():
    text = "a = 1\nT.gemm(A, B, C)  # tilelsp: ignore[gemm-shape-mismatch, gemm-dtype-mismatch]\n"
    diags = [diag("gemm-shape-mismatch", 2), diag("gemm-operand-scope", 2), diag("gemm-shape-mismatch", 1)]
    assert codes_left(text, diags) == [("gemm-operand-scope", 2), ("gemm-shape-mismatch", 1)]


def test_bare_ignore_suppresses_every_code_on_its_line_only():
    text = "x = 1  # tilelsp: ignore\ny = 2\n"
    assert codes_left(text, [diag("undefined-name", 1), diag("undefined-name", 2)]) == [("undefined-name", 2)]


def test_comment_on_any_line_of_a_multiline_statement_covers_it():
    text = "T.copy(\n    A[0:64, 0:32],\n    A_shared,  # tilelsp: ignore[copy-extent-mismatch]\n)\nT.copy(A, B)\n"
    diags = [diag("copy-extent-mismatch", 1), diag("copy-extent-mismatch", 2), diag("copy-extent-mismatch", 5)]
    assert codes_left(text, diags) == [("copy-extent-mismatch", 5)]


def test_compound_statement_header_is_covered_but_not_its_body():
    text = "for k in T.Pipelined(\n        4, num_stages=9):  # tilelsp: ignore\n    T.copy(A, B)\n"
    diags = [diag("pipeline-config", 1), diag("copy-shape-mismatch", 3)]
    assert codes_left(text, diags) == [("copy-shape-mismatch", 3)]


def test_ignore_file_anywhere_suppresses_the_code_everywhere():
    text = "x = 1\ny = 2\n# tilelsp: ignore-file[threads-not-warp-multiple]\n"
    diags = [diag("threads-not-warp-multiple", 1), diag("threads-exceeded", 2)]
    assert codes_left(text, diags) == [("threads-exceeded", 2)]


def test_hash_inside_a_string_is_not_a_comment():
    text = 's = "# tilelsp: ignore"\nt = \'\'\'\n# tilelsp: ignore-file\n\'\'\'\n'
    diags = [diag("undefined-name", 1), diag("undefined-name", 3)]
    assert codes_left(text, diags) == [("undefined-name", 1), ("undefined-name", 3)]


def test_directive_after_another_comment_and_case_and_spacing():
    text = "x = 1  # noqa: E501  #tilelsp:IGNORE[ undefined-name ]\n"
    assert codes_left(text, [diag("undefined-name", 1)]) == []


def test_instance_comment_is_not_a_suppression():
    text = "# tilelsp: matmul(M=4096, N=4096)\nx = 1\n"
    found = collect(SourceFile(text))
    assert not found.lines and not found.file


def test_file_with_syntax_error_still_honours_comments_before_it():
    text = "x = (1  # tilelsp: ignore[syntax-error]\n"
    assert codes_left(text, [diag("syntax-error", 1)]) == []
    text = "def f(:\n    pass  # tilelsp: ignore\n"
    assert codes_left(text, [diag("syntax-error", 1), diag("undefined-name", 2)]) == [("syntax-error", 1)]


def test_select_and_ignore():
    diags = [diag("gemm-shape-mismatch", 1), diag("threads-exceeded", 2), diag("nested-parallel", 3)]
    text = "a\nb\nc\n"
    assert codes_left(text, diags, select={"threads-exceeded", "nested-parallel"}, ignore={"nested-parallel"}) == [
        ("threads-exceeded", 2)
    ]
    assert [c for c, _ in codes_left(text, diags, ignore={"gemm-shape-mismatch"})] == ["threads-exceeded", "nested-parallel"]


def test_empty_code_list_means_all():
    found = collect(SourceFile("x = 1  # tilelsp: ignore[]\n"))
    assert found.lines == {1: {ALL}}


def test_unknown_code_in_a_comment_is_a_warning_at_the_comment():
    text = "x = 1\ny = 2  # tilelsp: ignore[gemm-shape-mismatc, undefined-name]\n"
    out = filter_diagnostics(SourceFile(text), [diag("undefined-name", 2)])
    assert [(d.code, d.severity.value, d.span.line) for d in out] == [("suppression-unknown-code", "warning", 2)]
    assert out[0].span.col == text.splitlines()[1].index("# tilelsp")
    assert "did you mean `gemm-shape-mismatch`" in out[0].message
    assert filter_diagnostics(SourceFile(text), [], ignore={"suppression-unknown-code"}) == []
    text2 = text + "# tilelsp: ignore-file[suppression-unknown-code]\n"
    assert filter_diagnostics(SourceFile(text2), [diag("undefined-name", 2)]) == []


def apply(text: str, edit) -> str:
    src = SourceFile(text)
    a, b = src.offset(edit.span.line, edit.span.col), src.offset(edit.span.end_line, edit.span.end_col)
    return text[:a] + edit.new_text + text[b:]


def test_suppression_edit_appends_extends_or_does_nothing():
    from tilelang_core.suppress import suppression_edit

    text = "a = 1\nT.gemm(A, B, C)   \nz = 3\n"
    fixed = apply(text, suppression_edit(SourceFile(text), "gemm-shape-mismatch", 2))
    assert fixed.splitlines()[1] == "T.gemm(A, B, C)  # tilelsp: ignore[gemm-shape-mismatch]"
    assert codes_left(fixed, [diag("gemm-shape-mismatch", 2)]) == []
    again = apply(fixed, suppression_edit(SourceFile(fixed), "gemm-dtype-mismatch", 2))
    assert again.splitlines()[1] == "T.gemm(A, B, C)  # tilelsp: ignore[gemm-dtype-mismatch, gemm-shape-mismatch]"
    assert suppression_edit(SourceFile(again), "gemm-dtype-mismatch", 2) is None
    cont = "x = a + \\\n    b  # note\n"
    fixed = apply(cont, suppression_edit(SourceFile(cont), "undefined-name", 1))
    assert fixed == "x = a + \\\n    b  # note  # tilelsp: ignore[undefined-name]\n"
    assert codes_left(fixed, [diag("undefined-name", 1)]) == []


def test_drop_suppressed_filters_lowering_findings_without_adding_warnings():
    from tilelang_core.diagnostics import Diagnostic, Severity
    from tilelang_core.source import SourceFile, Span
    from tilelang_core.suppress import drop_suppressed

    src = SourceFile("x = 1  # tilelsp: ignore[codegen-error]\ny = 2  # tilelsp: ignore[not-a-code]\nz = 3\n")
    diags = [Diagnostic(code, Severity.ERROR, "m", Span(line, 0, line, 1))
             for line, code in ((1, "codegen-error"), (2, "codegen-error"), (3, "layout-inference-failed"))]
    kept = drop_suppressed(src, diags)
    assert [(d.span.line, d.code) for d in kept] == [(2, "codegen-error"), (3, "layout-inference-failed")]
