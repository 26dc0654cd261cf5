"""`tilelsp check PATH...`: find the files, check them (in worker processes when there are several), render
the results, and return the exit status: 0 clean (warnings allowed), 1 errors found, 2 unreadable or crashed.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from tilelang_core.target import DEFAULT_ARCH

from . import config as cfg
from .loading import EXIT_CLEAN, EXIT_ERRORS, EXIT_USAGE

if TYPE_CHECKING:
    from .formats import FileResult

SKIP_DIRS = {"node_modules", "__pycache__", "site-packages", "venv"}
MIN_PARALLEL_FILES = 3  # below this, forking workers costs more than it saves


@dataclass(frozen=True)
class Job:
    """One file to check with its effective settings."""

    path: str  # filesystem path ("-" for stdin)
    display: str  # path as shown in the output
    targets: tuple[str, ...]
    select: frozenset | None
    ignore: frozenset
    explicit: bool  # named on the command line (else found by walking a folder)


def run_check(args) -> int:
    """`tilelsp check`: find files, check them (in parallel), render, and return the exit status."""
    jobs = collect_jobs(args)
    if not jobs:
        print(f"tilelsp: warning: no Python files found under {' '.join(args.paths)}", file=sys.stderr)
    results = run_jobs(jobs, parallel=not args.no_parallel)
    color = args.color == "always" or (args.color == "auto" and _stdout_is_tty() and not os.environ.get("NO_COLOR"))
    from tilelang_core import __version__
    from .formats import render

    sys.stdout.write(render(args.format, results, color=color, version=__version__))
    sys.stdout.flush()
    if args.format == "github":  # annotations go to stdout; the run's log also gets the summary
        from .formats import summary

        print(f"tilelsp: {summary(results)}", file=sys.stderr)
    if args.debug:
        for r in results:
            if r.trace:
                print(f"--- {r.path}\n{r.trace}", file=sys.stderr)
    return exit_status(results)


def exit_status(results) -> int:
    """2 when a file failed to read or crashed the checker, 1 when there are errors, else 0."""
    if any(r.failed for r in results):
        return EXIT_USAGE
    return EXIT_ERRORS if any(d.is_error for r in results for d in r.diagnostics) else EXIT_CLEAN


def _stdout_is_tty() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):
        return False


def collect_jobs(args) -> list[Job]:
    """Every file to check, with its settings, in deterministic display-path order (ConfigError on bad input)."""
    flag_targets = cfg.validate_targets(cfg.split_list(args.target), "--target") if args.target else None
    flag_select = cfg.validate_codes(cfg.split_list(args.select), "--select") if args.select else None
    flag_ignore = cfg.validate_codes(cfg.split_list(args.ignore), "--ignore") if args.ignore else None
    jobs: dict[str, Job] = {}
    for raw in args.paths:
        anchor = Path(args.stdin_filename or ".") if raw == "-" else Path(raw)
        if raw != "-" and not anchor.exists():
            raise cfg.ConfigError(f"{raw}: no such file or directory")
        conf = cfg.load(anchor)
        targets = flag_targets or conf.targets or (DEFAULT_ARCH,)
        select = flag_select if flag_select is not None else conf.select
        ignore = flag_ignore if flag_ignore is not None else conf.ignore
        for path, explicit in _files_under(raw, conf):
            display = (args.stdin_filename or "<stdin>") if path == "-" else cfg.relative_display(Path(path))
            key = "-" if path == "-" else os.path.realpath(path)
            if key not in jobs or explicit:  # a file named on the command line wins over the same file found in a walk
                jobs[key] = Job(path, display, targets, select, ignore, explicit)
    return sorted(jobs.values(), key=lambda j: j.display)


def _files_under(raw: str, conf: cfg.Config):
    """(path, explicit) for a PATH argument: the file itself, or the *.py files below a folder."""
    if raw == "-" or not Path(raw).is_dir():
        yield raw, True
        return
    start = Path(raw)
    for folder, dirs, files in os.walk(raw):
        dirs[:] = sorted(d for d in dirs if not _skip_dir(Path(folder, d), conf, start))
        for name in sorted(files):
            path = Path(folder, name)
            if name.endswith(".py") and not conf.excludes(path, start):
                yield str(path), False


def _skip_dir(path: Path, conf: cfg.Config, start: Path) -> bool:
    """Hidden folders, virtual environments, node_modules, caches and `exclude` matches are not walked."""
    name = path.name
    if name.startswith(".") or name in SKIP_DIRS or (path / "pyvenv.cfg").exists():
        return True
    return conf.excludes(path, start)


def run_jobs(jobs, parallel: bool = True) -> list[FileResult]:
    """Check every job; a process pool when there are several files (>= MIN_PARALLEL_FILES) and cores. Order is kept."""
    workers = min(len(jobs), _cpu_count())
    if not parallel or workers < 2 or len(jobs) < MIN_PARALLEL_FILES or any(j.path == "-" for j in jobs):
        return [check_file(j) for j in jobs]
    _preload()
    from concurrent.futures import ProcessPoolExecutor
    from concurrent.futures.process import BrokenProcessPool
    import multiprocessing

    method = "fork" if sys.platform.startswith("linux") else None
    try:
        with ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context(method)) as pool:
            return list(pool.map(check_file, jobs, chunksize=max(1, len(jobs) // (workers * 4))))
    except (BrokenProcessPool, OSError):  # a worker died (or no processes allowed): redo it in-process
        return [check_file(j) for j in jobs]


def _cpu_count() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _preload() -> None:
    """Import the check path before forking so that workers start warm."""
    try:
        import tilelang_core.analysis  # noqa: F401
        import tilelang_core.check  # noqa: F401
        import tilelang_core.frontend  # noqa: F401
    except Exception:  # a broken import is reported per file by check_file
        pass


def check_file(job: Job) -> FileResult:
    """Read and check one file; never raises (a crash becomes an `internal-error` diagnostic)."""
    from .formats import FileResult
    from tilelang_core.source import read_python_source
    from .loading import problem, reason

    text = read_python_source(job.path)
    if isinstance(text, OSError | UnicodeDecodeError | SyntaxError):
        return FileResult(job.display, "", [problem("file-unreadable", f"cannot read {job.display}: {reason(text)}")])
    if not job.explicit and "tilelang" not in text:
        return FileResult(job.display, kernels=0)  # not a TileLang file: nothing to check (and no text to send back)
    from tilelang_core.source import SourceFile
    from tilelsp.features.check import too_large

    too_big = too_large(SourceFile(text, job.display))
    if too_big is not None:  # the editor's bound: a generated multi-megabyte file would take minutes
        return FileResult(job.display, text, [too_big])
    try:
        import warnings

        from tilelang_core.check import check_source

        with warnings.catch_warnings():  # ast.parse warns about the user's code (e.g. "\d" escapes): not ours
            warnings.simplefilter("ignore", SyntaxWarning)
            warnings.simplefilter("ignore", DeprecationWarning)
            result = check_source(text, job.display, targets=job.targets, select=job.select, ignore=job.ignore)
    except Exception as exc:  # noqa: BLE001 -- one bad file must not stop the run
        import traceback

        msg = f"the checker crashed on this file ({type(exc).__name__}: {exc}); rerun with --debug for the traceback"
        return FileResult(job.display, text, [problem("internal-error", msg)], traceback.format_exc())
    from tilelsp.features.actions import with_server_fixes

    return FileResult(job.display, text, with_server_fixes(result), kernels=len(result.kernels))
