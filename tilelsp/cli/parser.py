"""The argparse parser of the `tilelsp` command line: every subcommand with its flags and help."""
from __future__ import annotations

import argparse

from tilelang_core import __version__
from tilelang_core.target import DEFAULT_ARCH, supported

TARGETS = supported()  # the spellings --target accepts


def build_parser() -> argparse.ArgumentParser:
    """The argparse parser for `tilelsp` and all its subcommands."""
    parser = argparse.ArgumentParser(
        prog="tilelsp", description="TileLang checker, compiler views and language server.",
        epilog="With no command, tilelsp serves the language server on stdio. See docs/cli.md.")
    parser.add_argument("--version", action="version", version=f"tilelsp {__version__}")
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
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise argparse.ArgumentTypeError(f"expected HOST:PORT such as 127.0.0.1:2087, got {text!r}")
    return text


def _add_stdio_flags(parser) -> None:
    """Flags LSP clients append (`--stdio`, `--clientProcessId`); accepted and otherwise ignored."""
    parser.add_argument("--stdio", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--clientProcessId", help=argparse.SUPPRESS)


def _add_check(sub) -> None:
    from .formats import FORMATS

    p = sub.add_parser(
        "check", help="check TileLang files and folders", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Check TileLang kernels without running them (no tvm, torch or GPU needed).\n"
        "Exit status: 0 clean (warnings allowed), 1 errors found, 2 usage or internal error.",
        epilog="examples:\n  tilelsp check examples/\n  tilelsp check kernels/ --target sm_80,sm_90a --format sarif > tilelsp.sarif\n"
        "  tilelsp check k.py --ignore threads-not-warp-multiple\n\n"
        "Settings: [tool.tilelsp] in pyproject.toml (targets, select, ignore, exclude).\n"
        "Suppress one line: # tilelsp: ignore[code]; a whole file: # tilelsp: ignore-file[code].")
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders ('-' reads stdin)")
    p.add_argument("--target", action="append", metavar="ARCH[,ARCH]", help=f"GPU arch(s) to check for (default {DEFAULT_ARCH})")
    p.add_argument("--format", choices=FORMATS, default="text", help="output format (default text)")
    p.add_argument("--select", action="append", metavar="CODE[,CODE]", help="report only these codes")
    p.add_argument("--ignore", action="append", metavar="CODE[,CODE]", help="never report these codes")
    p.add_argument("--no-parallel", action="store_true", help="check files one after another in this process")
    p.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="colour text output")
    p.add_argument("--stdin-filename", metavar="PATH", help="path to show (and to find config from) for '-'")
    p.add_argument("--debug", action="store_true", help="print tracebacks of internal errors")


def _add_ir(sub) -> None:
    p = sub.add_parser("ir", help="print a kernel's IR at one lowering stage")
    p.add_argument("file", metavar="FILE", help="the TileLang file (a Python file)")
    p.add_argument("--kernel", metavar="NAME", help="kernel (or factory) name; default the first")
    p.add_argument("--stage", metavar="STAGE", help="stage name (see --list-stages); default the final source")
    p.add_argument("--target", default=DEFAULT_ARCH, metavar="ARCH|cpu", help=f"{TARGETS} (default {DEFAULT_ARCH})")
    p.add_argument("--list-stages", action="store_true", help="list the stage names for the target and exit")
    p.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                   help="stage progress on stderr (default: when stderr is a terminal)")


def _add_layout(sub) -> None:
    p = sub.add_parser("layout", help="draw which thread holds each fragment element and each shared tile's banks")
    p.add_argument("file", metavar="FILE", help="the TileLang file (a Python file)")
    p.add_argument("--buffer", metavar="NAME", help="fragment or shared buffer; default every one (text, html)")
    p.add_argument("--kernel", metavar="NAME", help="kernel (or factory) name; default the first")
    p.add_argument("--target", default=DEFAULT_ARCH, metavar="ARCH", help=f"{TARGETS} (default {DEFAULT_ARCH})")
    p.add_argument("--format", choices=("svg", "png", "text", "html"),
                   help="svg or png (one buffer), text or html; default svg with --buffer, else text")
    p.add_argument("-o", "--output", metavar="PATH", help="write to PATH instead of stdout")


def _add_verify(sub) -> None:
    p = sub.add_parser("verify", help="run a kernel on random inputs and compare with a reference")
    _add_run_args(p, timeout=60)
    p.add_argument("--bench", action="store_true", help="also time the kernel")
    p.add_argument("--sanitize", action="store_true",
                   help="also run each instance on the CPU backend with shadow state: uninitialised reads, unwritten "
                        "output elements, cross-block races, out-of-bounds indexing")
    p.add_argument("--metamorphic", action="store_true",
                   help="also run each instance on the CPU backend at other tile / stage / thread configurations and "
                        "with one row block of its inputs perturbed: results that change are findings (no reference "
                        "needed)")
    _add_ray_flag(p)


def _add_run_args(p, timeout: int) -> None:
    """FILE, --kernel, --device, --json and --timeout (default `timeout` seconds): what verify and bench share."""
    p.add_argument("file", metavar="FILE", help="the TileLang file (a Python file)")
    p.add_argument("--kernel", metavar="NAME", help="kernel (or factory) name; default every kernel")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto", help="where to run (default auto)")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    p.add_argument("--timeout", type=float, default=float(timeout), metavar="SEC",
                   help=f"give up after SEC seconds (default {timeout})")


def _add_ray_flag(p) -> None:
    p.add_argument("--ray", metavar="ADDRESS", help="run on a Ray cluster (ADDRESS, or 'local' to start one; "
                   "default $TILELSP_RAY_ADDRESS); needs pip install 'tilelsp[ray]'")


def _add_bench(sub) -> None:
    p = sub.add_parser("bench", help="time each kernel (after checking it as verify does)")
    _add_run_args(p, timeout=120)
    _add_ray_flag(p)


def _add_autotune(sub) -> None:
    p = sub.add_parser("autotune", help="search a kernel factory's configs for the fastest")
    p.add_argument("file", metavar="FILE", help="the TileLang file (a Python file)")
    p.add_argument("--kernel", metavar="NAME", help="factory name; default the first tunable one")
    p.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where to time (default auto: the GPU, else the CPU backend)")
    p.add_argument("--configs", type=int, default=16, metavar="N", help="generated configs to try (default 16)")
    p.add_argument("--args", action="append", metavar="NAME=VALUE[,...]",
                   help="override the file's call arguments, e.g. --args M=8192,N=8192,K=8192")
    p.add_argument("--jobs", type=int, default=0, metavar="N", help="compile in N processes (default: every core)")
    p.add_argument("--warmup", type=float, default=25, metavar="MS",
                   help="warm-up budget of each timing in ms, as TileLang's (default 25; at least one call)")
    p.add_argument("--rep", type=float, default=100, metavar="MS",
                   help="timed budget of each timing in ms, as TileLang's (default 100; at least one call)")
    p.add_argument("--task-timeout", type=float, default=600.0, metavar="SEC",
                   help="with --ray: give up on one config's task after SEC seconds (default 600)")
    p.add_argument("--no-cache", action="store_true", help="search again even if the result is remembered")
    p.add_argument("--json", action="store_true", help="print the result as JSON")
    _add_ray_flag(p)
