"""How every subcommand other than `check` (`ir`, `verify`) reads and checks its FILE: exactly as `check` does.

A missing file or a folder is a usage error (exit 2); an unreadable, binary or badly encoded file is a
`file-unreadable` diagnostic (exit 2); a checker crash is `internal-error` (exit 2); check errors are printed
the way `check` prints them (exit 1); a file without kernels is a note and exit 0, as `check` finds nothing
wrong with it. Diagnostics go to stderr, so stdout keeps only the command's own output.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

from tilelang_core.source import SourceFile, read_python_source
from tilelang_core.target import DEFAULT_ARCH

from tilelsp.features.check import too_large

from . import config as cfg
from .formats import FileResult, render_text

EXIT_CLEAN, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


@dataclass
class Loaded:
    """A file that was read and checked without errors: its display path, text and check result."""

    display: str
    text: str
    result: object  # tilelang_core.check.CheckResult


def load_checked(path: str, command: str, targets=None, tolerate: tuple[str, ...] = ()) -> Loaded | int:
    """The checked file, or the exit status after its problem was printed to stderr (errors of the code areas in
    `tolerate` do not stop it)."""
    file = Path(path)
    if not file.exists():
        print(f"tilelsp {command}: {path}: no such file or directory", file=sys.stderr)
        return EXIT_USAGE
    if file.is_dir():
        print(f"tilelsp {command}: {path} is a folder; give one Python file", file=sys.stderr)
        return EXIT_USAGE
    display = cfg.relative_display(file)
    text = read_python_source(path)
    if isinstance(text, OSError | UnicodeDecodeError | SyntaxError):
        return _report(FileResult(display, "", [problem("file-unreadable", f"cannot read {display}: {reason(text)}")]))
    too_big = too_large(SourceFile(text, display))
    if too_big is not None:  # the editor's bound: checking (and then lowering) a huge file runs for minutes
        sys.stderr.write(render_text([FileResult(display, text, [too_big])], show_summary=False))
        return EXIT_USAGE
    try:
        conf = cfg.load(file)
    except cfg.ConfigError as exc:
        print(f"tilelsp {command}: {exc}", file=sys.stderr)
        return EXIT_USAGE
    try:
        import warnings

        from tilelang_core.check import check_source

        with warnings.catch_warnings():  # ast.parse warns about the user's code (e.g. "\d" escapes): not ours
            warnings.simplefilter("ignore")
            result = check_source(text, display, targets=tuple(targets or conf.targets or (DEFAULT_ARCH,)),
                                  select=conf.select, ignore=conf.ignore)
    except Exception as exc:  # noqa: BLE001 -- a checker bug: reported like `check` reports it
        msg = f"the checker crashed on this file ({type(exc).__name__}: {exc}); please report it with the file"
        return _report(FileResult(display, text, [problem("internal-error", msg)]))
    from tilelang_core.codes import CODES

    if any(d.is_error and getattr(CODES.get(d.code), "area", "") not in tolerate for d in result.diagnostics):
        return _report(FileResult(display, text, list(result.diagnostics)))
    if not result.kernels:
        print(f"tilelsp {command}: {display} has no TileLang kernels (nothing to do)", file=sys.stderr)
        return EXIT_CLEAN
    return Loaded(display, text, result)


def _report(result: FileResult) -> int:
    sys.stderr.write(render_text([result]))
    return EXIT_USAGE if result.failed else EXIT_ERRORS


def reason(exc: Exception) -> str:
    """Why a file could not be read, in a few words."""
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return str(exc)


def problem(code: str, message: str):
    """An error diagnostic about the whole file (line 1)."""
    from tilelang_core.diagnostics import Diagnostic, Severity
    from tilelang_core.source import Span

    return Diagnostic(code, Severity.ERROR, message, Span(1, 0, 1, 1))
