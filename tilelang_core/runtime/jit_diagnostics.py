"""JIT phase diagnostics (TileLang's `tilelang.jit.diagnostics`): the start, end (with its seconds) or failure of
each phase of a kernel's compilation (`parse`: the @T.prim_func to tile IR; `build`: lowering and the CPU library
or cubin), with the kernel and target, logged at INFO on the "tilelang.jit.diagnostics" logger. On when
TILELANG_JIT_DIAGNOSTICS is 1/true/yes/on, or per phase with `enabled=True`; silent otherwise.
"""
from __future__ import annotations

import contextlib
import logging
import os
import time

logger = logging.getLogger("tilelang.jit.diagnostics")


def diagnostics_enabled() -> bool:
    """Whether TILELANG_JIT_DIAGNOSTICS asks for phase logs."""
    return os.environ.get("TILELANG_JIT_DIAGNOSTICS", "").strip().lower() in ("1", "true", "yes", "on")


@contextlib.contextmanager
def jit_phase(name: str, enabled: bool | None = None, **context):
    """Log the phase `name` around the block (`context`: what it works on, e.g. kernel=..., target=...); the
    block's exception is logged as the phase's failure and raised unchanged."""
    if not (diagnostics_enabled() if enabled is None else enabled):
        yield
        return
    about = ", ".join(f"{key}={value!r}" for key, value in context.items())
    about = f" ({about})" if about else ""
    logger.info("TileLang JIT phase start: %s%s", name, about)
    start = time.perf_counter()
    try:
        yield
    except BaseException as exc:
        logger.info("TileLang JIT phase failed: %s after %.3f s%s: %s: %s", name, time.perf_counter() - start,
                    about, type(exc).__name__, exc)
        raise
    logger.info("TileLang JIT phase done: %s in %.3f s%s", name, time.perf_counter() - start, about)
