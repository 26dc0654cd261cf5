"""`tilelsp autotune --ray ADDRESS`: the search spread over a Ray cluster (`pip install 'tilelsp[ray]'`).

Each config compiles as a task on a CPU worker (`ray_tasks.compile_config`: the file's text travels, the worker
lowers and builds) and is timed as a task on a device worker (`measure_packed`: `num_gpus=1` for CUDA, a CPU for
the CPU backend; only the packed kernel travels). Tasks are retried on another worker when theirs dies
(`max_retries`), a task running past `task_timeout` is cancelled and its config counted as failed, Ctrl-C cancels
everything. Timings made side by side may disturb each other, so the three fastest are timed again one after
another on one worker and the winner is the fastest of that round. `--ray local` starts a cluster in this process
(TILELSP_RAY_CPUS caps its CPUs).
"""
from __future__ import annotations

import os
import time

from .ray_cluster import RETRIES, connect, drain

FINALISTS = 3


def autotune_on_ray(address: str, path: str, text: str, kernel, device: str, count: int, overrides: dict,
                    warmup: int = 5, rep: int = 20, task_timeout: float = 600.0, progress: bool = True):
    """Search the configs of the file's factory on the cluster; an AutotuneResult without a local kernel."""
    from tilelang_core.runtime import ray_tasks
    from tilelang_core.runtime.autotune import AutotuneResult, ConfigBuildError
    from tilelang_core.runtime.autotune_file import load_tuning
    from tilelang_core.runtime.autotune_search import Progress

    ray = connect(address)
    configs = load_tuning(path, text, kernel, device, count, overrides).configs
    name = os.path.basename(path)
    gpus = 1 if device == "cuda" else 0
    compile_task = ray.remote(num_cpus=1, max_retries=RETRIES)(ray_tasks.compile_config)
    measure_task = ray.remote(num_cpus=0 if gpus else 1, num_gpus=gpus, max_retries=RETRIES)(ray_tasks.measure_packed)
    final_task = ray.remote(num_cpus=0 if gpus else 1, num_gpus=gpus, max_retries=RETRIES)(ray_tasks.measure_many)
    bar = Progress(len(configs), f"autotune on Ray ({address})", enabled=progress)
    result, packed = AutotuneResult(), {}

    def handle(index, stage, value, error):
        if error is not None:
            result.failures.append((configs[index], ConfigBuildError(error)))
            bar.step("failed")
        elif stage == "compile":
            packed[index] = value
            return measure_task.remote(value, warmup, rep), "measure"
        else:
            latency, result.device = value
            result.timings.append((configs[index], latency))
            bar.step(f"{latency:.4g} ms")
        return None

    pending = {compile_task.remote(name, text, kernel, device, count, overrides, c): (i, "compile", time.time())
               for i, c in enumerate(configs)}
    drain(ray, pending, handle, task_timeout)
    if not result.timings:
        raise ConfigBuildError(f"all {len(configs)} configs failed: " + "; ".join(
            f"{c}: {e}" for c, e in result.failures[:4]))
    return _final_round(ray, final_task, result, configs, packed, warmup, rep)


def _final_round(ray, final_task, result, configs, packed, warmup, rep):
    """Time the fastest few again one after another on one worker; the winner is the fastest of that round."""
    ranked = sorted(result.timings, key=lambda t: t[1])[:FINALISTS]
    indices = [configs.index(c) for c, _ in ranked]
    again = ray.get(final_task.remote(warmup, rep, *[packed[i] for i in indices]))
    best = min(range(len(indices)), key=lambda k: again[k])
    result.config, result.latency = dict(configs[indices[best]]), again[best]
    return result
