"""Our `Diagnostic` objects as LSP diagnostics, the size cap of the fast check, and merging of sources.

Sources: "tilelsp" (fast check on change), "tilelsp-lower" (deep lowering on save), "tilelsp-verify".
"""
from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from tilelang_core.diagnostics import Diagnostic, Severity
from tilelang_core.source import SourceFile, Span

from ..positions import span_to_range

FAST, LOWER, VERIFY = "tilelsp", "tilelsp-lower", "tilelsp-verify"
MAX_CHECK_CHARS = 1_000_000  # the fast check is skipped above this size (a 10 MB file stays cheap)

_DOCS = Path(__file__).resolve().parents[2] / "docs" / "diagnostics.md"
_SEVERITY = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


def docs_link(code: str) -> str:
    """The documentation URL of a diagnostic code (docs/diagnostics.md#code)."""
    return f"{_DOCS.as_uri()}#{code}"


def to_lsp(diag: Diagnostic, source: SourceFile, uri: str, encoding: str, origin: str = FAST) -> types.Diagnostic:
    """One of our diagnostics as an LSP diagnostic, with related information and a docs link."""
    related = [
        types.DiagnosticRelatedInformation(types.Location(uri, span_to_range(r.span, source, encoding)), r.message)
        for r in diag.related
    ]
    data = {"code": diag.code, "kernel": diag.kernel, "instance": diag.instance}
    data.update({k: v for k, v in diag.data.items() if isinstance(v, (int, float, str, bool, type(None)))})
    return types.Diagnostic(
        range=span_to_range(diag.span, source, encoding),
        message=diag.message if not diag.target else f"{diag.message} [{diag.target}]",
        severity=_SEVERITY.get(diag.severity, types.DiagnosticSeverity.Error),
        code=diag.code,
        code_description=types.CodeDescription(href=docs_link(diag.code)),
        source=origin,
        related_information=related or None,
        data=data,
    )


def too_large(source: SourceFile) -> Diagnostic | None:
    """An info diagnostic when a file is too large for the fast check (which is then skipped)."""
    if len(source.text) <= MAX_CHECK_CHARS:
        return None
    return Diagnostic("file-too-large", Severity.INFO,
                      f"file has {len(source.text):,} characters; tilelsp checks files up to {MAX_CHECK_CHARS:,} "
                      "characters, so this one was skipped (split the kernels into smaller files)",
                      Span(1, 0, 1, len(source.line_text(1))))


def internal_error(exc: BaseException, what: str) -> Diagnostic:
    """A diagnostic that reports an unexpected failure of the checker itself, at the top of the file."""
    return Diagnostic("internal-error", Severity.ERROR,
                      f"tilelsp could not {what}: {type(exc).__name__}: {exc} (please report this with the file)",
                      Span(1, 0, 1, 0))
