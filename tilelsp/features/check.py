"""The fast check as the server's check children and the CLI run it: `run_check` (guarded, size-capped) and the
diagnostics it reports about itself."""
from __future__ import annotations

from tilelang_core.check import CheckResult
from tilelang_core.diagnostics import Diagnostic, Severity
from tilelang_core.source import SourceFile, Span

MAX_CHECK_CHARS = 1_000_000  # the fast check is skipped above this size (a 10 MB file stays cheap)


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


def run_check(text: str, path: str, targets) -> CheckResult:
    """`check_source` with the size cap and a guard: bad input yields diagnostics, never an exception."""
    source = SourceFile(text, path)
    big = too_large(source)
    if big is not None:
        return CheckResult(source, [], [big], None, tuple(targets))
    try:
        import warnings

        from tilelang_core.check import check_source

        with warnings.catch_warnings():  # ast.parse warns about the user's code: not ours to print
            warnings.simplefilter("ignore")
            return check_source(text, path, tuple(targets))
    except RecursionError as exc:
        return CheckResult(source, [], [internal_error(exc, "check this file (nesting too deep)")], None, tuple(targets))
    except MemoryError as exc:
        return CheckResult(source, [], [internal_error(exc, "check this file (out of memory)")], None, tuple(targets))
    except Exception as exc:  # noqa: BLE001 - the server must survive any checker bug
        return CheckResult(source, [], [internal_error(exc, "check this file")], None, tuple(targets))
