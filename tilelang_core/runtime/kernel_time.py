"""Device time of the kernels a call launches, read from the torch profiler (TileLang's
`tilelang.profiler.bench._bench_with_cupti`): on a GPU the CUDA kernels CUPTI records for the call's operators; on
the CPU backend, where the CPU stands in for the GPU, the time of the operators on its tensors (aten ops) and of
tilelang_core's CPU kernels, which run inside a profiler range named `KERNEL_RANGE + kernel name` while a profiler
records. The cache flush before each call runs in its own range and is left out, as TileLang does."""
from __future__ import annotations

import contextlib
import sys

KERNEL_RANGE = "tilelang_core kernel "  # a CPU-backend kernel call, as the profiler sees it
FLUSH_RANGE = "tilelang_core cache flush"


def profiling() -> bool:
    """True while a torch profiler records (a flag torch keeps; False when torch is not imported)."""
    torch = sys.modules.get("torch")
    return bool(getattr(getattr(getattr(torch, "autograd", None), "profiler", None), "_is_profiler_enabled", False))


def kernel_range(name: str):
    """A profiler range around one CPU-backend kernel call while a profiler records, else nothing (a range costs
    about 20 us even with no profiler)."""
    if not profiling():
        return contextlib.nullcontext()
    import torch

    return torch.profiler.record_function(KERNEL_RANGE + name)


def kernel_time(fn, cache, n_repeat: int) -> float:
    """Milliseconds of device work per call of `fn()`: `cache.zero_()` (the flush) then `fn()`, `n_repeat` times,
    recorded on the second of two rounds; the flush's work is not counted. 0.0 when `fn` launches nothing."""
    import warnings

    import torch

    from .timing import use_cuda_events

    gpu = use_cuda_events()
    activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if gpu else [])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "Profiler won't be using warmup": the first round is the warm-up
        schedule = torch.profiler.schedule(wait=1, warmup=0, active=1, repeat=1)
        with torch.profiler.profile(activities=activities, schedule=schedule) as prof:
            for _ in range(2):
                for _ in range(n_repeat):
                    with torch.profiler.record_function(FLUSH_RANGE):
                        cache.zero_()
                    fn()
                prof.step()
    total_us = sum(_own_time(e, gpu) for e in prof.events() if not _in_flush(e))
    return total_us / max(n_repeat, 1) / 1e3


def _in_flush(event) -> bool:
    while event is not None:
        if event.name == FLUSH_RANGE:
            return True
        event = event.cpu_parent
    return False


def _own_time(event, gpu: bool) -> float:
    """Microseconds of device work a host-side event accounts for itself (its children count their own): on a GPU
    the kernels it launched directly (the profiler links CUPTI's kernel records to the operator or range that
    launched them; the kernel records themselves are not counted again)."""
    if gpu:
        return event.self_device_time_total if str(event.device_type).endswith("CPU") else 0.0
    if event.name.startswith(("aten::", KERNEL_RANGE)):
        return event.self_cpu_time_total
    return 0.0
