"""The `tilelsp` command line: argparse for every subcommand; `check` runs here, `ir`/`verify`/`serve` load lazily.
What editors start (`tilelsp [serve] [--stdio]`) imports neither argparse nor the check's modules.

Exit status: 0 clean (warnings allowed), 1 errors found, 2 usage or internal error. Nothing heavy (pygls,
tvm, torch) is imported on the `check` path.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING

from tilelsp import config as cfg

if TYPE_CHECKING:
    import argparse

    from tilelsp.formats import FileResult

SKIP_DIRS = {"node_modules", "__pycache__", "site-packages", "venv"}
EXIT_CLEAN, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2
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


def _version() -> str:
    from tilelang_core import __version__

    return __version__


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser for `tilelsp` and all its subcommands."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="tilelsp", description="TileLang checker, compiler views and language server.",
        epilog="With no command, tilelsp serves the language server on stdio. See docs/cli.md.")
    parser.add_argument("--version", action="version", version=f"tilelsp {_version()}")
    _add_stdio_flags(parser)
    sub = parser.add_subparsers(dest="command", metavar="{check,ir,layout,verify,bench,autotune,serve}")
    _add_check(sub)
    _add_ir(sub)
    _add_layout(sub)
    _add_verify(sub)
    _add_bench(sub)
    _add_autotune(sub)
    serve = sub.add_parser("serve", help="run the language server (stdio by default)")
    serve.add_argument("--tcp", metavar="HOST:PORT", type=_host_port, help="listen on TCP instead of stdio")
    _add_stdio_flags(serve)
    return parser


def _host_port(text: str) -> str:
    """Validate `HOST:PORT` (HOST may be empty for localhost); the string is passed on unchanged."""
    import argparse

    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT such as 127.0.0.1:2087, got {text!r}")
    return text


def _add_stdio_flags(parser) -> None:
    """Flags LSP clients append (`--stdio`, `--clientProcessId`); accepted and otherwise ignored."""
    import argparse

    parser.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--clientProcessId", help=argparse.SUPPRESS)


def _add_check(sub) -> None:
    import argparse

    from tilelsp.formats import FORMATS

    p = sub.add_parser(
        "check", help="check TileLang files and folders", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Check TileLang kernels without running them (no tvm, torch or GPU needed).\n"
        "Exit status: 0 clean (warnings allowed), 1 errors found, 2 usage or internal error.",
        epilog="examples:\n  tilelsp check examples/\n  tilelsp check kernels/ --target sm_80,sm_90a --format sarif > tilelsp.sarif\n"
        "  tilelsp check k.py --ignore threads-not-warp-multiple\n\n"
        "Settings: [tool.tilelsp] in pyproject.toml (targets, select, ignore, exclude).\n"
        "Suppress one line: # tilelsp: ignore[code]; a whole file: # tilelsp: ignore-file[code].")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders ('-' reads stdin)")
    p.add_argument("--target", action="append", metavar="ARCH[,ARCH]", help="GPU arch(s) to check for (default sm_90a)")
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    p.add_argument("--select", action="append", metavar="CODE[,CODE]", help="report only these codes")
    p.add_argument("--ignore", action="append", metavar="CODE[,CODE]", help="never report these codes")
    p.add_argument("--no-parallel", action="store_true", help="check files one after another in this process")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="colour text output")
    p.add_argument("--stdin-filename", metavar="PATH", help="path to show (and to find config from) for '-'")
    p.add_argument("--debug", action="store_true", help="print tracebacks of internal errors")


def _add_ir(sub) -> None:
    p = sub.add_parser("ir", help="print a kernel's IR at one lowering stage")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--kernel", metavar="NAME", help="kernel (or factory) name; default the first")
    p.add_argument("--stage", metavar="STAGE", help="stage name (see --list-stages); default the final source")
    p.add_argument("--target", default="sm_90a", metavar="ARCH|cpu", help="sm_80 … sm_90a, or cpu (default sm_90a)")
    p.add_argument("--list-stages", action="store_true", help="list the stage names for the target and exit")


def _add_layout(sub) -> None:
    p = sub.add_parser("layout", help="draw which thread holds each fragment element and each shared tile's banks")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--buffer", metavar="NAME", help="fragment or shared buffer; default every one (text, html)")
    p.add_argument("--kernel", metavar="NAME", help="kernel (or factory) name; default the first")
    p.add_argument("--target", default="sm_90a", metavar="ARCH", help="sm_80 … sm_90a (default sm_90a)")
    p.add_argument("--format", choices=("svg", "png", "text", "html"),
                   help="svg or png (one buffer), text or html; default svg with --buffer, else text")
    p.add_argument("-o", "--output", metavar="PATH", help="write to PATH instead of stdout")


def _add_verify(sub) -> None:
    p = sub.add_parser("verify", help="run a kernel on random inputs and compare with a reference")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--kernel", metavar="NAME", help="kernel (or factory) name; default every kernel")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="where to run (default auto)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--timeout", type=float, default=60.0, metavar="SEC", help="give up after SEC seconds (default 60)")
    p.add_argument("--bench", action="store_true", help="also time the kernel")
    p.add_argument("--sanitize", action="store_true",
                   help="also run each instance on the CPU backend with shadow state: uninitialised reads, unwritten "
                        "output elements, cross-block races, out-of-bounds indexing")
    _add_ray_flag(p)


def _add_ray_flag(p) -> None:
    p.add_argument("--ray", metavar="ADDRESS", help="run on a Ray cluster (ADDRESS, or 'local' to start one; "
                   "default $TILELSP_RAY_ADDRESS); needs pip install 'tilelsp[ray]'")


def _add_bench(sub) -> None:
    p = sub.add_parser("bench", help="time each kernel (after checking it as verify does)")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--kernel", metavar="NAME", help="kernel (or factory) name; default every kernel")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="where to run (default auto)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SEC", help="give up after SEC seconds (default 120)")
    _add_ray_flag(p)


def _add_autotune(sub) -> None:
    p = sub.add_parser("autotune", help="search a kernel factory's configs for the fastest")
    p.add_argument("file", metavar="FILE")
    p.add_argument("--kernel", metavar="NAME", help="factory name; default the first tunable one")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where to time (default auto: the GPU, else the CPU backend)")
    p.add_argument("--configs", type=int, default=16, metavar="N", help="generated configs to try (default 16)")
    p.add_argument("--args", action="append", metavar="NAME=VALUE[,...]",
                   help="override the file's call arguments, e.g. --args M=8192,N=8192,K=8192")
    p.add_argument("--jobs", type=int, default=0, metavar="N", help="compile in N processes (default: every core)")
    p.add_argument("--warmup", type=int, default=5, metavar="N", help="warm-up runs per config (default 5)")
    p.add_argument("--rep", type=int, default=20, metavar="N", help="timed runs per config (default 20)")
    p.add_argument("--task-timeout", type=float, default=600.0, metavar="SEC",
                   help="with --ray: give up on one config's task after SEC seconds (default 600)")
    p.add_argument("--no-cache", action="store_true", help="search again even if the result is remembered")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    _add_ray_flag(p)


def main(argv=None) -> int:
    """Entry point of the `tilelsp` console script and `python -m tilelsp`."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        # what editors run (`tilelsp serve --stdio`) skips building every subcommand's parser: initialize sooner
        args = _plain_serve(argv) or build_parser().parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    try:
        return _run(args)
    except cfg.ConfigError as exc:
        return _fail(str(exc))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # `tilelsp check . | head`: stop quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_ERRORS
    except Exception as exc:  # noqa: BLE001 -- a bug of ours: one line; the traceback on request (always for serve,
        # whose stderr is the editor's log)
        if getattr(args, "debug", False) or os.environ.get("TILELSP_DEBUG") or args.command in (None, "serve"):
            import traceback

            traceback.print_exc()
        return _fail(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug or TILELSP_DEBUG=1 for details)")


def _plain_serve(argv: list) -> SimpleNamespace | None:
    """The arguments of `tilelsp [serve] [--stdio]` without argparse (None for anything else)."""
    rest = argv[1:] if argv[:1] == ["serve"] else argv
    if any(a != "--stdio" for a in rest):
        return None
    return SimpleNamespace(command="serve" if argv[:1] == ["serve"] else None, tcp=None, stdio=bool(rest),
                              clientProcessId=None)


def _run(args) -> int:
    if args.command == "check":
        return run_check(args)
    if args.command == "ir":
        return _dispatch("tilelsp.ir_command", "run_ir", args, "tilelsp ir")
    if args.command == "verify":
        return _dispatch("tilelsp.verify_command", "run_verify", args, "tilelsp verify")
    if args.command == "bench":
        args.bench = True
        return _dispatch("tilelsp.verify_command", "run_verify", args, "tilelsp bench")
    if args.command == "autotune":
        return _dispatch("tilelsp.autotune_command", "run_autotune", args, "tilelsp autotune")
    if args.command == "layout":
        return _dispatch("tilelsp.layout_command", "run_layout", args, "tilelsp layout")
    if args.command is None:
        args.tcp = None
        if sys.stdin.isatty():
            print("tilelsp: serving LSP on stdio (Ctrl-C to stop; `tilelsp --help` lists commands)", file=sys.stderr)
    return _dispatch("tilelsp.server", "run_serve", args, "tilelsp serve")


def _fail(message: str) -> int:
    print(f"tilelsp: error: {message}", file=sys.stderr)
    return EXIT_USAGE


def _dispatch(module_name: str, func_name: str, args, feature: str) -> int:
    """Import `module_name` only now and call its entry point; exit 2 with a clear message if it is missing."""
    import importlib

    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name == module_name:
            return _fail(f"{feature} is not available in this build ({module_name} is missing)")
        return _fail(f"{feature} needs the Python package {exc.name!r}: {exc}")
    func = getattr(module, func_name, None)
    if func is None:
        return _fail(f"{feature} is not available in this build ({module_name}.{func_name} is missing)")
    code = func(args)
    return code if isinstance(code, int) else EXIT_CLEAN


# --- check ----------------------------------------------------------------------------------


def run_check(args) -> int:
    """`tilelsp check`: find files, check them (in parallel), render, and return the exit status."""
    jobs = collect_jobs(args)
    if not jobs:
        print(f"tilelsp: warning: no Python files found under {' '.join(args.paths)}", file=sys.stderr)
    results = run_jobs(jobs, parallel=not args.no_parallel)
    color = args.color == "always" or (args.color == "auto" and _stdout_is_tty() and not os.environ.get("NO_COLOR"))
    from tilelsp.formats import render

    sys.stdout.write(render(args.format, results, color=color, version=_version()))
    sys.stdout.flush()
    if args.format == "github":  # annotations go to stdout; the run's log also gets the summary
        from tilelsp.formats import summary

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
        targets = flag_targets or conf.targets or ("sm_90a",)
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
    from tilelsp.formats import FileResult
    from tilelsp.loading import problem, read_source, reason

    text = read_source(job.path)
    if isinstance(text, OSError | UnicodeDecodeError | SyntaxError):
        return FileResult(job.display, "", [problem("file-unreadable", f"cannot read {job.display}: {reason(text)}")])
    if not job.explicit and "tilelang" not in text:
        return FileResult(job.display)  # not a TileLang file: nothing to check (and no text to send back)
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

    return FileResult(job.display, text, with_server_fixes(result))


if __name__ == "__main__":
    sys.exit(main())
