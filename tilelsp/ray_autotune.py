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
from pathlib import Path

FINALISTS = 3


class RayUnavailable(RuntimeError):
    """The ray package is not installed."""


def connect(address: str):
    """The ray module, initialised against `address` ('local' starts a local cluster)."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--ray needs the ray package: pip install 'tilelsp[ray]'") from None
    if not ray.is_initialized():
        root = str(Path(__file__).resolve().parents[1])  # workers import tilelang_core from this tree
        env = {"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}}
        if address == "local":
            cpus = int(os.environ.get("TILELSP_RAY_CPUS", "0")) or os.cpu_count() or 1
            ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, runtime_env=env,
                     configure_logging=False)
        else:
            ray.init(address=address, log_to_driver=False, runtime_env=env, configure_logging=False)
    return ray


def _error_text(exc) -> str:
    cause = getattr(exc, "cause", None)
    if cause is not None:
        return f"{type(cause).__name__}: {cause}"
    return f"{type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}"


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
    compile_task = ray.remote(num_cpus=1, max_retries=3)(ray_tasks.compile_config)
    gpus = 1 if device == "cuda" else 0
    measure_task = ray.remote(num_cpus=0 if gpus else 1, num_gpus=gpus, max_retries=3)(ray_tasks.measure_packed)
    final_task = ray.remote(num_cpus=0 if gpus else 1, num_gpus=gpus, max_retries=3)(ray_tasks.measure_many)
    bar = Progress(len(configs), f"autotune on Ray ({address})", enabled=progress)
    result = AutotuneResult()
    pending = {compile_task.remote(name, text, kernel, device, count, overrides, c): (i, "compile", time.time())
               for i, c in enumerate(configs)}
    packed: dict = {}
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
            for ref in done:
                index, stage, _ = pending.pop(ref)
                try:
                    value = ray.get(ref)
                except Exception as exc:  # noqa: BLE001 -- the config's own failure (after the retries)
                    result.failures.append((configs[index], ConfigBuildError(_error_text(exc))))
                    bar.step("failed")
                    continue
                if stage == "compile":
                    packed[index] = ref
                    pending[measure_task.remote(ref, warmup, rep)] = (index, "measure", time.time())
                else:
                    latency, result.device = value
                    result.timings.append((configs[index], latency))
                    bar.step(f"{latency:.4g} ms")
            now = time.time()
            for ref, (index, stage, started) in list(pending.items()):
                if now - started > task_timeout:
                    ray.cancel(ref, force=True)
                    pending.pop(ref)
                    result.failures.append((configs[index], TimeoutError(f"the {stage} task ran past {task_timeout:g} s")))
                    bar.step("timed out")
    except KeyboardInterrupt:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise
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
