"""Timing of kernels: warm up, then mean milliseconds per call (CUDA events on GPU, perf_counter on CPU)."""
from __future__ import annotations

import time


def bench(fn, warmup: int = 25, rep: int = 100, device: str = "cpu", max_seconds: float = 10.0) -> float:
    """Mean ms per call of `fn()` after `warmup` calls; stops early after `max_seconds` of timing."""
    if device == "cuda":
        return _bench_cuda(fn, warmup, rep)
    for _ in range(max(0, warmup)):
        fn()
    n, start = 0, time.perf_counter()
    while n < max(1, rep):
        fn()
        n += 1
        if time.perf_counter() - start > max_seconds:
            break
    return (time.perf_counter() - start) * 1e3 / n


def _bench_cuda(fn, warmup: int, rep: int) -> float:
    import torch

    for _ in range(max(0, warmup)):
        fn()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(max(1, rep)):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end) / max(1, rep)


def time_once(fn) -> tuple[object, float]:
    """Run `fn()` once; return (result, milliseconds)."""
    start = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - start) * 1e3
