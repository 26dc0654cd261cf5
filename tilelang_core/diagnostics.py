"""The one Diagnostic type, the sink that collects them, and the error raised by the compiler API.

Every user-facing problem is a `Diagnostic` with a stable kebab-case code from `codes.CODES`.
Renderers (text, json, sarif, github, LSP) all start from this object.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .codes import default_severity
from .severity import Severity
from .snippet import location_block
from .source import Span

__all__ = ["CompileError", "Diagnostic", "DiagnosticSink", "Fix", "Related", "Severity", "TextEdit",
           "internal_message", "sorted_diagnostics"]


@dataclass(frozen=True)
class Related:
    """A secondary location that explains a diagnostic ("allocated here")."""

    span: Span
    message: str


@dataclass(frozen=True)
class TextEdit:
    """Replace the text under `span` with `new_text` (used by quick fixes)."""

    span: Span
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A machine-applicable fix: a title and the edits that implement it."""

    title: str
    edits: tuple[TextEdit, ...] = ()


@dataclass(frozen=True)
class Diagnostic:
    """A problem at a source span, with a stable code and a message that names the fix."""

    code: str
    severity: Severity
    message: str
    span: Span
    related: tuple[Related, ...] = ()
    fix: Fix | None = None
    kernel: str | None = None
    instance: str | None = None
    target: str | None = None
    data: dict = field(default_factory=dict, compare=False, hash=False)

    @property
    def is_error(self) -> bool:
        """True for error severity."""
        return self.severity is Severity.ERROR


class DiagnosticSink:
    """Collects diagnostics; deduplicates the same code at the same span with the same message."""

    def __init__(self) -> None:
        self.items: list[Diagnostic] = []
        self._seen: set[tuple] = set()

    def add(self, diag: Diagnostic) -> None:
        """Record one diagnostic (duplicates are dropped)."""
        key = (diag.code, diag.span, diag.message)
        if key not in self._seen:
            self._seen.add(key)
            self.items.append(diag)

    def emit(self, code: str, message: str, span: Span, *, severity: Severity | None = None, **kw) -> Diagnostic:
        """Build and record a diagnostic; the severity defaults to the code table's."""
        diag = Diagnostic(code, severity or default_severity(code), message, span, **kw)
        self.add(diag)
        return diag

    def extend(self, diags) -> None:
        """Record several diagnostics."""
        for d in diags:
            self.add(d)

    @property
    def has_errors(self) -> bool:
        """True when any recorded diagnostic is an error."""
        return any(d.is_error for d in self.items)


def internal_message(where: str, exc: BaseException) -> str:
    """The message of an internal-error: what failed where, and a request to report it (never raises)."""
    try:
        detail = str(exc)
    except Exception:  # noqa: BLE001 - e.g. an integer too long to print
        detail = ""
    detail = detail if len(detail) <= 300 else detail[:300] + "..."
    return (f"internal error {where} ({type(exc).__name__}{': ' + detail if detail else ''}); this is a tilelsp bug, "
            "not yours: please report it with this kernel")


def sorted_diagnostics(diags) -> list[Diagnostic]:
    """Diagnostics in source order (line, column, code)."""
    return sorted(diags, key=lambda d: (d.span.line, d.span.col, d.code, d.message))


class CompileError(Exception):
    """Raised by the compiler API when a kernel has errors; carries the diagnostics and the path.

    When an error's code has a Python error in the code table (`CodeInfo.raises`: the one TileLang raises for it,
    e.g. ValueError for an invalid value), the CompileError made is of a subclass that is also that error, so
    `except ValueError` and `pytest.raises(ValueError)` written for TileLang catch it."""

    def __new__(cls, diagnostics=(), *args, **kwargs):
        if cls is CompileError and isinstance(diagnostics, (list, tuple)):
            from .codes import python_error

            builtin = python_error([d.code for d in diagnostics if d.is_error])
            if builtin is not None:
                cls = _flavour(builtin)
        return super().__new__(cls)

    def __init__(self, diagnostics, path: str = "<string>", source_text: str | None = None):
        self.diagnostics = list(diagnostics)
        self.path = path
        self.source_text = source_text
        super().__init__(self._summary())

    def __reduce__(self):  # pickled by its arguments: the subclass is made again from the codes
        return CompileError, (self.diagnostics, self.path, self.source_text)

    def _summary(self) -> str:
        """Each error as `path:line:col: error[code] message`, then its `--> path:line:col` block with the source
        line (and one per related location: where the buffer it names is declared), as TileLang's errors read."""
        text = self._source()
        lines = []
        for d in self.diagnostics:
            if d.is_error:
                lines.append(f"{self.path}:{d.span.line}:{d.span.col + 1}: error[{d.code}] {d.message}")
                lines += location_block(self.path, text, d.span)
                for rel in d.related:
                    lines.append(f"  note: {rel.message}")
                    lines += location_block(self.path, text, rel.span)
        return "\n".join(lines) or "compilation failed"

    def _source(self) -> str | None:
        """The text the spans point into: the one given, else the file at `path` (None when unreadable)."""
        if self.source_text is not None:
            return self.source_text
        try:
            with open(self.path, encoding="utf-8", errors="replace") as fh:
                return fh.read()
        except (OSError, ValueError):
            return None


_FLAVOURS: dict[type, type] = {}


def _flavour(builtin: type) -> type:
    """The CompileError subclass that is also `builtin` (named CompileError too: it is one)."""
    if builtin not in _FLAVOURS:
        _FLAVOURS[builtin] = type("CompileError", (CompileError, builtin), {
            "__module__": __name__, "__qualname__": f"CompileError[{builtin.__name__}]",
            "__doc__": f"A CompileError that is also a {builtin.__name__}."})
    return _FLAVOURS[builtin]
