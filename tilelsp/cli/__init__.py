"""The `tilelsp` command line: parses the arguments (parser.py) and runs the subcommand's module, each loaded
lazily (check.py, ir.py, verify.py, ..., the server). What editors start
(`tilelsp [serve] [--stdio]`) imports neither argparse nor the check's modules.

Exit status: 0 clean (warnings allowed), 1 errors found, 2 usage or internal error. Nothing heavy (pygls,
tvm, torch) is imported on the `check` path.
"""
from __future__ import annotations

import os
import sys
from types import SimpleNamespace

from . import config as cfg

EXIT_CLEAN, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


def main(argv=None) -> int:
    """Entry point of the `tilelsp` console script and `python -m tilelsp`."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        # what editors run (`tilelsp serve --stdio`) skips building every subcommand's parser: initialize sooner
        args = _plain_serve(argv) or _parse(argv)
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


def _parse(argv: list):
    """The parsed arguments of any command line other than a plain serve."""
    from .parser import build_parser

    return build_parser().parse_args(argv)


def _plain_serve(argv: list) -> SimpleNamespace | None:
    """The arguments of `tilelsp [serve] [--stdio]` without argparse (None for anything else)."""
    rest = argv[1:] if argv[:1] == ["serve"] else argv
    if any(a != "--stdio" for a in rest):
        return None
    return SimpleNamespace(command="serve" if argv[:1] == ["serve"] else None, tcp=None, stdio=bool(rest),
                              clientProcessId=None)


def _run(args) -> int:
    if args.command == "check":
        from .check import run_check

        return run_check(args)
    if args.command == "ir":
        return _dispatch("tilelsp.cli.ir", "run_ir", args, "tilelsp ir")
    if args.command == "verify":
        return _dispatch("tilelsp.cli.verify", "run_verify", args, "tilelsp verify")
    if args.command == "bench":
        args.bench = True
        return _dispatch("tilelsp.cli.verify", "run_verify", args, "tilelsp bench")
    if args.command == "autotune":
        return _dispatch("tilelsp.cli.autotune", "run_autotune", args, "tilelsp autotune")
    if args.command == "layout":
        return _dispatch("tilelsp.cli.layout", "run_layout", args, "tilelsp layout")
    if args.command is None:
        args.tcp = None
        if sys.stdin.isatty():
            print("tilelsp: serving LSP on stdio (Ctrl-C to stop; `tilelsp --help` lists commands)", file=sys.stderr)
    return _dispatch("tilelsp.server.app", "run_serve", args, "tilelsp serve")


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

