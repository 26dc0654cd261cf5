"""`python -m tilelang_core.run [--device auto|cpu|cuda] FILE [ARGS...]`: run an unmodified TileLang file.

`import tilelang` is aliased to tilelang_core (`tilelang_core.alias`; even when a real tilelang is present only if
TILELANG_CORE_ALIAS=force) and FILE runs as `__main__` with `sys.argv = [FILE, *ARGS]`. `--device auto` (the
default) uses a CUDA GPU when torch sees one, else the CPU: then `runtime.cpu_device` stands in for the GPU
(torch's CUDA queries answer as one sm_90 GPU, CUDA tensors live on the CPU, every kernel builds for the CPU
backend) and one line on stderr says so. When the run prints nothing for 10 s a line on stderr says what it is
doing (`runtime.quiet_watch`); `--timeout SEC` ends it after SEC seconds (status 124), saying what it was doing.
A package the file imports that is not installed (einops, say) is named in one line with the pip command.
"""
from __future__ import annotations

import os
import runpy
import sys

USAGE = "usage: python -m tilelang_core.run [--device auto|cpu|cuda] [--timeout SEC] FILE [ARGS...]"
DEVICES = ("auto", "cpu", "cuda")
PREFIX = "tilelang_core.run"


def _parse(argv: list[str]) -> tuple[str, float | None, list[str]] | str:
    """(device, timeout, [FILE, *ARGS]) from the command line, or a usage error's message (options before FILE)."""
    device, timeout = "auto", None
    while argv and argv[0].split("=", 1)[0] in ("--device", "--timeout"):
        opt = argv.pop(0)
        name, _, value = opt.partition("=")
        if not value:
            if not argv:
                return f"{name} needs a value"
            value = argv.pop(0)
        if name == "--device":
            if value not in DEVICES:
                return f"--device {value!r}: use auto, cpu or cuda"
            device = value
        else:
            try:
                timeout = float(value)
            except ValueError:
                return f"--timeout {value!r}: give seconds, e.g. --timeout 300"
    if not argv:
        return "no FILE given"
    return device, timeout, argv


def gpu_visible() -> bool:
    """Whether torch sees a CUDA GPU (False without torch or with a CPU build of it)."""
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def use_cpu_device(reason: str) -> None:
    """Stand a CPU in for the GPU (`runtime.cpu_device`) and say so in one line on stderr."""
    from .runtime import cpu_device

    try:
        cpu_device.install()
    except ImportError:  # without torch there are no CUDA tensors to move; kernels still build for the CPU
        pass
    cpu_device.route_kernels_to_cpu()
    print(f"{PREFIX}: {reason}: kernels run on the CPU backend and CUDA tensors live on the CPU "
          "(timings are CPU timings)", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Install the alias (and the CPU stand-in where needed) and run FILE as __main__; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0
    parsed = _parse(argv)
    if isinstance(parsed, str):
        print(f"{PREFIX}: {parsed}\n{USAGE}", file=sys.stderr)
        return 2
    device, timeout, (path, *args) = parsed
    if not os.path.isfile(path):
        print(f"{PREFIX}: no such file: {path}", file=sys.stderr)
        return 2
    if device == "cuda" and not gpu_visible():
        print(f"{PREFIX}: --device cuda, but torch sees no CUDA GPU here (torch.cuda.is_available() is False): "
              "run on a GPU machine, or use --device cpu (or auto) to run on the CPU backend", file=sys.stderr)
        return 2
    from .alias import install_alias

    install_alias()
    if device == "cpu":
        use_cpu_device("--device cpu")
    elif device == "auto" and not gpu_visible():
        use_cpu_device("no CUDA GPU here")
    from .runtime.quiet_watch import QuietWatch

    QuietWatch(path, prefix=PREFIX, timeout_s=timeout).start()
    sys.argv = [path, *args]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        runpy.run_path(path, run_name="__main__")
    except ModuleNotFoundError as exc:
        if not exc.name or exc.name.split(".")[0] in ("tilelang", "tilelang_core"):
            raise  # ours (or the alias's): the traceback is the report
        print(f"{PREFIX}: {path}{_where(exc, path)} imports '{exc.name}', which is not installed for this Python "
              f"({sys.executable}): pip install {exc.name.split('.')[0]}", file=sys.stderr)
        return 1
    return 0


def _where(exc: BaseException, path: str) -> str:
    """':LINE' of the innermost frame of `exc` in `path`, or ''."""
    import traceback

    target = os.path.abspath(path)
    lines = [f.lineno for f in traceback.extract_tb(exc.__traceback__) if os.path.abspath(f.filename) == target]
    return f":{lines[-1]}" if lines else ""


if __name__ == "__main__":
    sys.exit(main())
