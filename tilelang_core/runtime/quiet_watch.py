"""Says what a run is doing when it has printed nothing for a while (`python -m tilelang_core.run`).

A daemon thread looks at the main thread's stack whenever stdout and stderr have been silent for `quiet_s`
seconds (then after twice as long, and so on, up to once a minute) and writes one line to stderr: how long it has
been quiet, what tilelang_core is doing (building a kernel, running one with its input shapes, timing) or that the
file's own code (or torch) is running, and the file's line. With `timeout_s` it ends the process (status 124) once
the run has taken that long, saying what it was doing.
"""
from __future__ import annotations

import os
import sys
import threading
import time

_CORE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_ACTIVITIES = (  # (path fragment under tilelang_core, what it means), innermost match wins
    ("runtime/timing.py", "timing with do_bench"),
    ("runtime/profiler.py", "checking against the reference (profiler)"),
    ("runtime/autotune", "autotuning"),
    ("runtime/cpu_library.py", "running a kernel on the CPU backend"),
    ("runtime/launch.py", "running a kernel"),
    ("runtime/cpu_artifact.py", "building a kernel for the CPU backend"),
    ("runtime/artifact.py", "building a kernel"),
    ("passes/", "lowering a kernel"),
    ("codegen/", "generating a kernel's code"),
    ("frontend/", "parsing a kernel"),
)


class _Tap:
    """A text stream that notes the time of each write and passes everything on."""

    def __init__(self, stream, watch: "QuietWatch"):
        self._stream, self._watch = stream, watch

    def write(self, text):
        if text:
            self._watch.last_output = time.monotonic()
        return self._stream.write(text)

    def __getattr__(self, name):
        return getattr(self._stream, name)


def _kernel_call(frame) -> str:
    """'kernel NAME on SHAPES' for a frame of JITKernel.__call__, else ''."""
    kernel = frame.f_locals.get("self")
    if frame.f_code.co_name != "__call__" or not hasattr(kernel, "params"):
        return ""
    shapes = ", ".join("x".join(str(d) for d in a.shape) for a in frame.f_locals.get("args", ()) if hasattr(a, "shape"))
    where = "the CPU backend" if getattr(kernel, "target", "") == "cpu" else "the GPU"
    return f"running kernel {kernel.name!r} on {where}" + (f" (inputs {shapes})" if shapes else "")


def describe(frame, focus: str) -> str:
    """What the stack under `frame` is doing, and where in the file `focus` (its innermost frame there)."""
    activity, where, innermost = "", "", None
    while frame is not None:
        path = os.path.abspath(frame.f_code.co_filename)
        innermost = innermost or path
        if not activity and path.startswith(_CORE):
            rel = path[len(_CORE) + 1:].replace(os.sep, "/")
            activity = _kernel_call(frame) if rel == "runtime/jit_kernel.py" else ""
            activity = activity or next((what for frag, what in _ACTIVITIES if rel.startswith(frag)), "")
        if not where and path == focus:
            where = f"{os.path.basename(focus)}:{frame.f_lineno} in {frame.f_code.co_name}"
        frame = frame.f_back
    if not activity:
        inside_torch = innermost is not None and f"{os.sep}torch{os.sep}" in innermost
        activity = "in torch (the file's own reference code)" if inside_torch else "in the file's own code"
    return f"{activity}, at {where}" if where else activity


class QuietWatch:
    """Watches stdout/stderr of this process and reports on stderr when they stay silent."""

    def __init__(self, focus: str, quiet_s: float = 10.0, prefix: str = "tilelang_core.run",
                 timeout_s: float | None = None):
        self.focus, self.quiet_s, self.prefix, self.timeout_s = os.path.abspath(focus), quiet_s, prefix, timeout_s
        self.started = time.monotonic()
        self.last_output = time.monotonic()
        self._main = threading.main_thread().ident
        self._stderr = sys.stderr
        self._stop = threading.Event()

    def start(self) -> "QuietWatch":
        """Tap stdout and stderr and start the watching thread."""
        sys.stdout, sys.stderr = _Tap(sys.stdout, self), _Tap(sys.stderr, self)
        threading.Thread(target=self._loop, name="tilelang_core-quiet-watch", daemon=True).start()
        return self

    def stop(self) -> None:
        """Stop reporting (the taps stay: they only pass writes on)."""
        self._stop.set()

    def _report(self, text: str) -> None:
        self._stderr.write(f"{self.prefix}: {text}\n")
        self._stderr.flush()

    def _doing(self) -> str:
        frame = sys._current_frames().get(self._main)
        return describe(frame, self.focus) if frame is not None else "finishing"

    def _loop(self) -> None:
        wait = self.quiet_s
        while not self._stop.wait(min(1.0, self.quiet_s)):
            now = time.monotonic()
            if self.timeout_s is not None and now - self.started > self.timeout_s:
                self._report(f"stopped after {self.timeout_s:g} s (--timeout) while {self._doing()}")
                os._exit(124)  # a kernel running in native code cannot be interrupted from Python
            quiet = now - self.last_output
            if quiet < self.quiet_s:
                wait = self.quiet_s
            elif quiet >= wait:
                self._report(f"no output for {quiet:.0f} s: {self._doing()}")
                wait = quiet + min(60.0, quiet)
