"""`tilelang.profiler.bench`: TileLang's timing module. `do_bench` is ours (runtime/timing.py: budgets in ms, CUDA
events on a GPU, the host clock on the CPU backend); `_bench_with_cupti(fn, cache, n_repeat)` times the kernels a
call launches from the torch profiler (runtime/kernel_time.py: CUPTI's records on a GPU, the operators and
tilelang_core kernels on the CPU backend), the cache flush left out."""
from __future__ import annotations

from ..runtime.kernel_time import kernel_time as _bench_with_cupti
from ..runtime.timing import do_bench

__all__ = ["do_bench"]
