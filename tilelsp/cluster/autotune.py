"""`tilelsp autotune --ray ADDRESS`: the search spread over a Ray cluster (`pip install 'tilelsp[ray]'`).

Each config compiles as a task on a CPU worker (`autotune_tasks.compile_config`: the file's text travels, the worker
lowers and builds; a CPU kernel is checked against the file's reference there, as a local search checks it). For
CUDA each built kernel is timed as it arrives by a task on a GPU worker (`measure_packed`, `num_gpus=1`: only the
packed kernel travels). When the CPU backend is the device, the CPUs that compile are the device: timing waits until
every config is compiled and then runs in one task, every kernel one after another (`measure_on_cpu`), with the
driver's kernel thread count, as a local search times them (`warmup`, `rep`: budgets in ms). Either way the fastest
few are timed again in interleaved rounds (`autotune_search.final_round`) until each is separated from the leader
or level with it, and the winner is named by the same rule as in a local search (`autotune.settle_final`). Tasks are
retried on another worker when theirs dies (`max_retries`), a task running past `task_timeout` is cancelled and its
config counted as failed, Ctrl-C cancels everything. `--ray local` starts a cluster in this process
(TILELSP_RAY_CPUS caps its CPUs). Each task's time stamps are kept in `AutotuneResult.trace`.
"""
from __future__ import annotations

import os
import time

from .connection import RETRIES, connect, drain


def autotune_on_ray(address: str, path: str, text: str, kernel, device: str, count: int, overrides: dict,
                    warmup: float = 25, rep: float = 100, task_timeout: float = 600.0, progress: bool = True,
                    configs: list | None = None):
    """Search the configs of the file's factory (`configs`: already loaded ones) on the cluster; an
    AutotuneResult without a local kernel."""
    from . import autotune_tasks
    from tilelang_core.runtime.autotune import AutotuneResult, ConfigBuildError, settle_final
    from tilelang_core.runtime.autotune_search import Progress, cpu_thread_setting

    ray = connect(address)
    if configs is None:
        from tilelang_core.runtime.autotune_file import load_tuning

        configs = load_tuning(path, text, kernel, device, count, overrides).configs
    gpu = device == "cuda"
    compile_task = ray.remote(num_cpus=1, max_retries=RETRIES)(autotune_tasks.compile_config)
    measure_task = ray.remote(num_cpus=0, num_gpus=1, max_retries=RETRIES)(autotune_tasks.measure_packed)
    bar = Progress(len(configs), f"autotune on Ray ({address})" + ("" if gpu else ": compiling"), enabled=progress)
    result, packed, timed = AutotuneResult(), {}, []

    def handle(index, stage, value, error):
        if error is not None:
            result.failures.append((configs[index], ConfigBuildError(error)))
            bar.step("failed")
        elif stage == "compile":
            packed[index], stamp = value
            result.trace.append(stamp)
            if gpu:
                return measure_task.remote(packed[index], warmup, rep), "measure"
            bar.step("compiled")
        else:
            latency, result.device = value
            result.timings.append((configs[index], latency))
            timed.append(index)
            bar.step(f"{latency:.4g} ms")
        return None

    name = os.path.basename(path)
    threads = None if gpu else cpu_thread_setting()
    pending = {compile_task.remote(name, text, kernel, device, count, overrides, c, threads):
               (i, "compile", time.time()) for i, c in enumerate(configs)}
    drain(ray, pending, handle, task_timeout)
    if not (result.timings if gpu else packed):
        raise ConfigBuildError(f"all {len(configs)} configs failed: " + "; ".join(
            f"{c}: {e}" for c, e in result.failures[:4]))
    if gpu:
        picks, final = _final_on_gpu(ray, result, packed, timed, warmup, rep, task_timeout)
    else:
        picks, final = _time_on_cpu(ray, result, configs, packed, warmup, rep, task_timeout)
    row = {configs.index(config): k for k, (config, _) in enumerate(result.timings)}  # config index -> its row
    settle_final(result, [row[i] for i in picks], final, order=picks)
    return result


def _run_one(ray, ref, stage: str, task_timeout: float):
    """The value of one task, with the per-task timeout and Ctrl-C handling of `drain`."""
    from tilelang_core.runtime.autotune import ConfigBuildError

    out = {}

    def keep(_, __, value, error):
        if error is not None:
            raise ConfigBuildError(f"the {stage} task on the Ray cluster failed: {error}")
        out["value"] = value

    drain(ray, {ref: (None, stage, time.time())}, keep, task_timeout)
    return out["value"]


def _time_on_cpu(ray, result, configs, packed, warmup, rep, task_timeout):
    """Every compiled kernel timed one after another in one task (the CPU is one device), then the finalists."""
    from . import autotune_tasks
    from tilelang_core.runtime.autotune_search import cpu_thread_setting

    order = sorted(packed)
    task = ray.remote(num_cpus=1, max_retries=RETRIES)(autotune_tasks.measure_on_cpu)
    done = _run_one(ray, task.remote(warmup, rep, cpu_thread_setting(), *[packed[i] for i in order]), "timing",
                    task_timeout)
    result.device = done["device"]
    result.trace.append(done["stamp"])
    result.timings = [(configs[i], ms) for i, ms in zip(order, done["timings"])]
    return [order[k] for k in done["finalists"]], done["final"]


def _final_on_gpu(ray, result, packed, timed, warmup, rep, task_timeout):
    """The first pass's fastest few timed again, interleaved, on one GPU worker."""
    from . import autotune_tasks
    from tilelang_core.runtime.autotune_search import fastest

    picks = [timed[k] for k in fastest(result.timings)]
    task = ray.remote(num_cpus=0, num_gpus=1, max_retries=RETRIES)(autotune_tasks.final_round)
    return picks, _run_one(ray, task.remote(warmup, rep, *[packed[i] for i in picks]), "final timing", task_timeout)
