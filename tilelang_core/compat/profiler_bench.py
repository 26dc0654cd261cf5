"""`tilelang.profiler.bench`: TileLang's timing module. `do_bench` is ours (runtime/timing.py: budgets in ms, CUDA
events on a GPU, the host clock on the CPU backend); CUPTI kernel-activity timing is not provided and says so."""
from __future__ import annotations

from ..runtime.timing import do_bench
from . import Unsupported

__all__ = ["do_bench"]

_bench_with_cupti = Unsupported(
    "tilelang.profiler.bench._bench_with_cupti (CUPTI kernel timing)",
    "tilelang_core times a call with CUDA events on a GPU and with the host clock on the CPU backend, where there is "
    "no CUDA kernel for CUPTI to count; use tilelang.profiler.do_bench(fn, warmup=..., rep=...)")
