"""`tilelang.tools.cuda.iket`: in-kernel event tracing.

Inside a kernel, `iket.mark(name, payload=...)`, `with iket.range(name):` and `iket.range_push/pop` are read by
the frontend (`frontend/iket.py`) and, while a session is enabled, become timestamped records that the CUDA
kernel writes to its trace buffer (`codegen/cuda/iket.py`: %globaltimer, event id, block, warp, 32-bit payload);
the CPU backend runs them as no-ops. This module is the host side: `session(...)` (enables instrumentation for
kernels built inside it, sets the output directory, bypasses the kernel cache), the event table and the
output-path helpers. After each launch of an instrumented kernel the launcher reads its records back into
`<kernel>.trace.json` in the output directory (runtime/iket_trace.py; `traces()` returns them too).
"""
from __future__ import annotations

import contextlib
import os
import shlex
from pathlib import Path

from ..frontend.iket import REGISTRY, PayloadSpec

__all__ = ["PayloadSpec", "session", "enable", "disable", "is_enabled", "enable_runtime_payloads",
           "disable_runtime_payloads", "runtime_payloads_enabled", "event_table", "reset", "mark", "payload",
           "range", "range_push", "range_pop", "range_start", "range_end", "output_dir", "set_output_dir",
           "output_path", "trace_files", "profile_command", "traces"]

_state = {"depth": 0, "output_dir": None}
_PAYLOADS = "TL_IKET_RUNTIME_PAYLOADS"  # read by runtime/iket_trace.py


def enable() -> None:
    """Instrument kernels built from now on."""
    REGISTRY.enabled = True


def disable() -> None:
    """Stop instrumenting kernels built from now on (their markers become no-ops)."""
    REGISTRY.enabled = False


def is_enabled() -> bool:
    """Whether kernels built now are instrumented."""
    return REGISTRY.enabled


def enable_runtime_payloads() -> None:
    """Report payload values in the traces (they are always recorded on the device)."""
    os.environ[_PAYLOADS] = "1"


def disable_runtime_payloads() -> None:
    """Leave payload values out of the traces."""
    os.environ[_PAYLOADS] = "0"


def runtime_payloads_enabled() -> bool:
    """Whether traces report payload values."""
    return os.environ.get(_PAYLOADS, "0") == "1"


def traces() -> list[dict]:
    """The decoded launches of instrumented kernels in this process (runtime/iket_trace.py), newest last."""
    from ..runtime.iket_trace import LAUNCHES

    return list(LAUNCHES)


def reset() -> None:
    """Forget the registered events (ids restart at 1 for kernels built afterward)."""
    REGISTRY.events.clear()


def event_table() -> list[dict]:
    """The registered events: name, event_id, kind (mark | range_start | range_end), payload_type."""
    return sorted((dict(e) for e in REGISTRY.events.values()), key=lambda e: e["event_id"])


@contextlib.contextmanager
def session(reset_events=True, override=True, disable_on_exit=True, output_dir=None, runtime_payloads=None,
            disable_cache=True):
    """Instrument the kernels built inside the `with` block; restores the previous state on exit."""
    from . import env

    saved = (REGISTRY.enabled, os.environ.get(_PAYLOADS), _state["output_dir"], os.environ.get("TL_IKET_OUTPUT_DIR"),
             env.is_cache_enabled())
    if reset_events:
        reset()
    enable()
    if runtime_payloads is not None:
        (enable_runtime_payloads if runtime_payloads else disable_runtime_payloads)()
    if output_dir is not None:
        set_output_dir(output_dir)
    if disable_cache:
        env.disable_cache()
    _state["depth"] += 1
    try:
        yield
    finally:
        _state["depth"] -= 1
        if disable_on_exit and _state["depth"] == 0:
            REGISTRY.enabled = saved[0]
        _state["output_dir"] = saved[2]
        for key, value in ((_PAYLOADS, saved[1]), ("TL_IKET_OUTPUT_DIR", saved[3])):
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        (env.enable_cache if saved[4] else env.disable_cache)()


def _kernel_only(name: str):
    def call(*args, **kwargs):
        raise RuntimeError(f"iket.{name}(...) is a kernel statement: call it inside a @T.prim_func body")
    call.__name__ = name
    call.__doc__ = f"`iket.{name}` outside a kernel: raises (inside one the frontend reads it)."
    return call


mark, range_push, range_pop, range_start, range_end = (_kernel_only(n) for n in (
    "mark", "range_push", "range_pop", "range_start", "range_end"))


def payload(expr, dtype: str | None = None) -> PayloadSpec:
    """A payload descriptor (the frontend builds its own inside a kernel)."""
    return PayloadSpec(expr, dtype or "int32")


class range:  # noqa: N801 - TileLang's name; `with iket.range(name):` inside a kernel is read by the frontend
    """`with iket.range(name):` outside a kernel does nothing."""

    def __init__(self, name: str, payload=None):
        self.name, self.payload = name, payload

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def set_output_dir(path) -> Path | None:
    """Set (and create) the export directory; also `TL_IKET_OUTPUT_DIR`."""
    if path is None:
        _state["output_dir"] = None
        os.environ.pop("TL_IKET_OUTPUT_DIR", None)
        return None
    out = Path(path).expanduser().absolute()
    out.mkdir(parents=True, exist_ok=True)
    _state["output_dir"] = out
    os.environ["TL_IKET_OUTPUT_DIR"] = str(out)
    return out


def output_dir(default=None) -> Path | None:
    """The export directory: the session's, else `TL_IKET_OUTPUT_DIR`, else `default`."""
    if _state["output_dir"] is not None:
        return _state["output_dir"]
    env_dir = os.environ.get("TL_IKET_OUTPUT_DIR")
    if env_dir:
        return Path(env_dir).expanduser().absolute()
    return Path(default).expanduser().absolute() if default is not None else None


def output_path(name: str, *, directory=None) -> Path:
    """`name` under the export directory (created)."""
    base = output_dir(directory)
    if base is None:
        raise RuntimeError("the iket output directory is not configured: pass directory= or use "
                           "iket.session(output_dir=...)")
    base.mkdir(parents=True, exist_ok=True)
    return base / name


def trace_files(*, directory=None) -> list[Path]:
    """The `*.trace.json` files of the export directory, largest first."""
    base = output_dir(directory)
    if base is None or not base.exists():
        return []
    return sorted(base.glob("*.trace.json"), key=lambda path: path.stat().st_size, reverse=True)


def profile_command(command, *, directory, postprocess: str = "all", clobber: bool = True) -> str:
    """The external IKET profiler's command line for `command` (a string; nothing is launched)."""
    parts = ["python", "-m", "iket.cli.main", "--output-dir", str(Path(directory).expanduser())]
    parts += (["--clobber"] if clobber else []) + ["profile", "--postprocess", postprocess, "--"]
    tail = command if isinstance(command, str) else " ".join(shlex.quote(str(c)) for c in command)
    return " ".join(shlex.quote(p) for p in parts) + " " + tail
