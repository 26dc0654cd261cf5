"""Run the file's own `main()` / `run()` up to its first call of a kernel and keep the kernel and the arguments it
passes, so verify can feed a kernel the index tables the file builds and resolve factory arguments the file only
computes at run time. The entry point runs with torch's, Python's and numpy's random generators seeded (and put
back after), so the tables it draws are the same in every process: a local verify and a Ray worker agree."""
from __future__ import annotations

import contextlib
import inspect
import io
import sys
from dataclasses import dataclass

ENTRY_POINTS = ("main", "run")


class _Reached(BaseException):
    """Raised inside the user's code when it calls the kernel being looked for (stops it there)."""

    def __init__(self, kernel, args: tuple):
        super().__init__()
        self.kernel = kernel
        self.args_seen = args


def entry_point(glb: dict):
    """The file's `main` or `run` function when it can be called without arguments, else None."""
    for name in ENTRY_POINTS:
        fn = glb.get(name)
        if not callable(fn) or getattr(fn, "__module__", None) not in (None, glb.get("__name__")):
            continue
        try:
            params = inspect.signature(fn).parameters.values()
        except (TypeError, ValueError):
            continue
        if all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params):
            return fn
    return None


@dataclass(frozen=True)
class Call:
    """The file's entry point's first call of a kernel: the JITKernel it built, the arguments (CPU tensors) and the
    entry point's name."""

    kernel: object
    args: tuple
    entry: str


_CALLS: dict = {}  # (id of the loaded module's globals, kernel name) -> Call | None: the entry point runs once


def captured_call(glb: dict, kernel_name: str) -> Call | None:
    """The first call the file's entry point makes of a kernel named `kernel_name` (None when it has no entry
    point, never calls it, or fails first); the call itself does not run."""
    key = (id(glb), kernel_name)
    if key not in _CALLS:
        _CALLS[key] = _run_until(glb, kernel_name)
    return _CALLS[key]


def _run_until(glb: dict, kernel_name: str) -> Call | None:
    from ..runtime.jit import JITKernel

    fn = entry_point(glb)
    if fn is None:
        return None
    original = JITKernel.__call__

    def spy(self, *args):
        if self.func.name == kernel_name:
            raise _Reached(self, args)
        return original(self, *args)

    saved_argv = sys.argv
    JITKernel.__call__ = spy
    sys.argv = [glb.get("__file__") or fn.__name__]
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()), _seeded():
            fn()
    except _Reached as hit:
        return Call(hit.kernel, tuple(_to_cpu(a) for a in hit.args_seen), fn.__name__)
    except (Exception, SystemExit):  # the entry point needs a GPU, arguments or data: nothing captured
        return None
    finally:
        JITKernel.__call__ = original
        sys.argv = saved_argv
    return None


@contextlib.contextmanager
def _seeded(seed: int = 0):
    """Seed torch's, Python's and (when loaded) numpy's global generators for the block; their states are restored
    after it."""
    import random

    import torch

    np = sys.modules.get("numpy")
    py_state, np_state = random.getstate(), np.random.get_state() if np is not None else None
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        random.seed(seed)
        if np is not None:
            np.random.seed(seed)
        try:
            yield
        finally:
            random.setstate(py_state)
            if np is not None:
                np.random.set_state(np_state)


def _to_cpu(a):
    return a.detach().cpu() if hasattr(a, "detach") else a
