"""The hazards that in-order execution hides, read from the schedule the CUDA path emits: pipelined prefetches
(pipeline_hazards), concurrent thread roles (role_hazards) and hand-written asynchronous copies (async_hazards).
Run by `tilelsp check` after the analysis, on the kernel instances without errors. Pure Python (no tvm)."""
from __future__ import annotations

from ..analysis.checks.accesses import launches
from ..analysis.walker import Ctx
from ..diagnostics import internal_message
from .async_hazards import async_hazards
from .pipeline_hazards import pipeline_hazards
from .role_hazards import role_hazards


def schedule_hazards(kernels, sink) -> None:
    """Report the schedule hazards of every kernel instance that has no error in `sink`."""
    failed = {(d.kernel, d.instance) for d in sink.items if d.is_error}
    for func in kernels:
        if func.errors or (func.name, func.instance or None) in failed:
            continue
        ctx = Ctx(func, sink)

        def emit(code, message, span, related=(), severity=None):
            ctx.emit(code, message, span, related=related, **({"severity": severity} if severity else {}))

        try:
            for acc in launches(func):
                pipeline_hazards(func, acc, emit)
                role_hazards(func, acc, emit)
                async_hazards(acc, emit)
        except RecursionError:
            continue
        except Exception as exc:  # noqa: BLE001 - bad input must never crash the checker
            ctx.emit("internal-error", internal_message(f"in the schedule hazard checks of `{func.name}`", exc),
                     func.span)
