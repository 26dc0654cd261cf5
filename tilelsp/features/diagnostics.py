"""Our `Diagnostic` objects as LSP diagnostics, and merging of sources.

Sources: "tilelsp" (fast check on change), "tilelsp-lower" (deep lowering on save), "tilelsp-verify".
"""
from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from tilelang_core.diagnostics import Diagnostic, Severity
from tilelang_core.source import SourceFile

from .positions import span_to_range

FAST, LOWER, VERIFY = "tilelsp", "tilelsp-lower", "tilelsp-verify"

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
