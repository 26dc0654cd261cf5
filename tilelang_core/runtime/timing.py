"""TileLang's `do_bench`: warm-up and timing budgets in milliseconds, a bound on calls and time, a progress line.

As in TileLang, `warmup` and `rep` are budgets in milliseconds: a few calls estimate the time of one, and the
number of warm-up and timed calls is the budget divided by that estimate (at least one each); `n_warmup` /
`n_repeat` above 0 give the counts directly. Every count is capped at `MAX_CALLS` and the timed calls stop after
`MAX_SECONDS`, so a slow call (a torch reference on the CPU) costs a few calls, not hundreds. When the planned
work runs past `PROGRESS_AFTER_S` a line on stderr says what is being timed and for how long.
"""
from __future__ import annotations

import statistics
import sys
import time

MAX_CALLS = 10_000  # warm-up and timed calls, each
MAX_SECONDS = 30.0  # timed calls stop after this much wall time (the mean is of the calls made)
ESTIMATE_CALLS = 5
PROGRESS_AFTER_S = 2.0
RETURN_MODES = ("mean", "median", "min", "max")


def use_cuda_events() -> bool:
    """Whether timings come from CUDA events: a real GPU is in use (not the stand-in of `cpu_device`)."""
    from . import cpu_device

    if cpu_device.installed():
        return False
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available() and torch.cuda.is_initialized())


class _HostClock:
    """Per-call timing on the host clock (the CPU backend and torch on the CPU run synchronously)."""

    def times(self, fn, calls: int, budget_s: float) -> list[float]:
        out: list[float] = []
        begin = time.perf_counter()
        while len(out) < calls:
            start = time.perf_counter()
            fn()
            out.append((time.perf_counter() - start) * 1e3)
            if start - begin > budget_s:
                break
        return out


class _CudaClock:
    """Per-call timing with CUDA events, synchronized once after the calls (as Triton's do_bench)."""

    def __init__(self):
        import torch

        self.torch = torch

    def times(self, fn, calls: int, budget_s: float) -> list[float]:
        event = self.torch.cuda.Event
        pairs = []
        begin = time.perf_counter()
        self.torch.cuda.synchronize()
        while len(pairs) < calls:
            start, end = event(enable_timing=True), event(enable_timing=True)
            start.record()
            fn()
            end.record()
            pairs.append((start, end))
            if time.perf_counter() - begin > budget_s:
                break
        self.torch.cuda.synchronize()
        return [s.elapsed_time(e) for s, e in pairs]


def plan_calls(estimate_ms: float, warmup: float, rep: float, n_warmup: int = 0, n_repeat: int = 0) -> tuple[int, int]:
    """(warm-up calls, timed calls) for budgets `warmup`/`rep` in ms and one call's `estimate_ms`; counts above 0
    win; each in 1..MAX_CALLS."""
    per_call = max(estimate_ms, 1e-3)
    warm = int(n_warmup) if n_warmup and n_warmup > 0 else int(warmup / per_call)
    reps = int(n_repeat) if n_repeat and n_repeat > 0 else int(rep / per_call)
    return min(MAX_CALLS, max(1, warm)), min(MAX_CALLS, max(1, reps))


def _label(fn) -> str:
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or type(fn).__name__
    return "a lambda" if name.endswith("<lambda>") else name


def summarize(times: list[float], return_mode: str = "mean", quantiles=None):
    """The figure TileLang returns from per-call times (ms): the quantiles when given, else `return_mode`."""
    if quantiles:
        ordered = sorted(times)
        picks = [ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))] for q in quantiles]
        return picks[0] if len(picks) == 1 else picks
    if return_mode not in RETURN_MODES:
        raise ValueError(f"do_bench return_mode {return_mode!r}: use one of {', '.join(RETURN_MODES)}")
    return {"mean": statistics.fmean, "median": statistics.median, "min": min, "max": max}[return_mode](times)


def do_bench(fn, warmup: float = 25, rep: float = 100, n_warmup: int = 0, n_repeat: int = 0, quantiles=None,
             return_mode: str = "mean", progress=None):
    """Milliseconds per call of `fn()`: `warmup` ms of warm-up, then `rep` ms of timed calls (TileLang's meaning),
    bounded by MAX_CALLS and MAX_SECONDS; `progress` (default stderr) gets one line when the work is long."""
    clock = _CudaClock() if use_cuda_events() else _HostClock()
    out = sys.stderr if progress is None else progress
    start = time.perf_counter()
    # a first call warms caches (and builds lazily built code); then up to ESTIMATE_CALLS within the `rep` budget
    first = clock.times(fn, 1, 0.0)
    estimates = clock.times(fn, ESTIMATE_CALLS - 1, max(rep, 1e-3) / 1e3 - first[0] / 1e3) if first[0] < rep else []
    estimate = statistics.median(estimates or first)
    warm, reps = plan_calls(estimate, warmup, rep, n_warmup, n_repeat)
    planned_s = (warm + reps) * estimate / 1e3
    if planned_s > PROGRESS_AFTER_S or time.perf_counter() - start > PROGRESS_AFTER_S:
        bound = f", stopping after {MAX_SECONDS:.0f} s" if reps * estimate / 1e3 > MAX_SECONDS else ""
        print(f"do_bench: timing {_label(fn)}: ~{estimate:.3g} ms a call; {warm} warm-up + {reps} timed "
              f"call(s), ~{min(planned_s, warm * estimate / 1e3 + MAX_SECONDS):.0f} s{bound}", file=out, flush=True)
    clock.times(fn, warm - len(first) - len(estimates), float("inf"))  # the calls so far count as warm-up
    return summarize(clock.times(fn, reps, MAX_SECONDS), return_mode, quantiles)
