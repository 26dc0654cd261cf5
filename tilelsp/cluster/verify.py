"""`tilelsp verify --ray ADDRESS` and `tilelsp bench --ray ADDRESS`: each kernel instance is built with its
inputs and expected outputs on a CPU worker (`verify_tasks.prepare_instance`; the file's text travels) and run,
compared and timed on a device worker (`run_instance`, `num_gpus=1` for CUDA; the packed kernel and tensors
travel, no source and no tvm). The records are those of a local verify."""
from __future__ import annotations

import os
import time

from .connection import RETRIES, connect, drain


def verify_on_ray(address: str, path: str, text: str, kernels: list, kernel, device: str, bench: bool,
                  task_timeout: float) -> list[dict]:
    """One record per selected instance (`kernels`: the check result's selected kernels, in order)."""
    from . import verify_tasks
    from tilelang_core.runtime.autotune_search import Progress

    ray = connect(address)
    if device == "auto":
        device = "cuda" if ray.cluster_resources().get("GPU", 0) >= 1 else "cpu"
    gpus = 1 if device == "cuda" else 0
    prepare = ray.remote(num_cpus=1, max_retries=RETRIES)(verify_tasks.prepare_instance)
    run = ray.remote(num_cpus=0 if gpus else 1, num_gpus=gpus, max_retries=RETRIES)(verify_tasks.run_instance)
    name = os.path.basename(path)
    records: dict[int, dict] = {}
    bar = Progress(len(kernels), f"verify on Ray ({address})")

    def handle(index, stage, value, error):
        func = kernels[index]
        if error is not None:
            records[index] = {"kernel": func.name, "instance": func.instance, "device": device, "passed": False,
                              "max_abs_err": None, "max_rel_err": None, "time_ms": None,
                              "message": f"{stage} on the Ray cluster failed: {error}"}
            bar.step("failed")
            return None
        if stage == "prepare":
            return run.remote(value, device, bench), "run"
        records[index] = value
        bar.step("PASS" if value.get("passed") else "FAIL")
        return None

    pending = {prepare.remote(name, text, kernel, k, device): (k, "prepare", time.time()) for k in range(len(kernels))}
    drain(ray, pending, handle, task_timeout)
    return [dict(records[k], file=path) for k in range(len(kernels))]
