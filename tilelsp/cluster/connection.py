"""Ray for `--ray ADDRESS` (`pip install 'tilelsp[ray]'`): connecting, and draining two-stage task pipelines
(compile on a CPU worker, then run on a device worker) with per-task timeouts and cancellation.

Tasks are declared with `max_retries`, so a task whose worker dies runs again on another worker. `--ray local`
starts a cluster in this process (TILELSP_RAY_CPUS caps its CPUs; its workers run at this process's priority);
TILELSP_RAY_ADDRESS is the default address.
"""
from __future__ import annotations

import os
import time
from pathlib import Path

RETRIES = 3


class RayUnavailable(ImportError):
    """The ray package is not installed."""


def connect(address: str):
    """The ray module, initialised against `address` ('local' starts a local cluster)."""
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--ray needs the ray package: pip install 'tilelsp[ray]'") from None
    if not ray.is_initialized():
        root = str(Path(__file__).resolve().parents[2])  # workers import tilelang_core and tilelsp from this tree
        env = {"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}}
        if address == "local":
            cpus = int(os.environ.get("TILELSP_RAY_CPUS", "0")) or os.cpu_count() or 1
            # workers at this process's priority, as a local search's are (Ray's default nices them by 15: on a
            # busy machine a local cluster's compiles and timings then got a fraction of a local search's CPU)
            ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False, runtime_env=env,
                     configure_logging=False, _system_config={"worker_niceness": 0})
        else:
            ray.init(address=address, log_to_driver=False, runtime_env=env, configure_logging=False)
    return ray


def error_text(exc) -> str:
    """The task's own error (Ray wraps it), in one line."""
    cause = getattr(exc, "cause", None)
    if cause is not None:
        return f"{type(cause).__name__}: {cause}"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text.splitlines()[-1] if text else ''}"


def drain(ray, pending: dict, handle, task_timeout: float) -> None:
    """Wait for every task of `pending` (ref -> (item, stage, start time)); `handle(item, stage, value, error)`
    is called once per finished, failed or timed-out task and may return (ref, stage) to wait for next.
    Ctrl-C cancels what is still running."""
    try:
        while pending:
            done, _ = ray.wait(list(pending), num_returns=1, timeout=1.0)
            for ref in done:
                item, stage, _ = pending.pop(ref)
                try:
                    value, error = ray.get(ref), None
                except Exception as exc:  # noqa: BLE001 -- the task's failure after its retries
                    value, error = None, error_text(exc)
                follow = handle(item, stage, value, error)
                if follow is not None:
                    pending[follow[0]] = (item, follow[1], time.time())
            now = time.time()
            for ref, (item, stage, started) in list(pending.items()):
                if now - started > task_timeout:
                    ray.cancel(ref, force=True)
                    pending.pop(ref)
                    handle(item, stage, None, f"TimeoutError: the {stage} task ran past {task_timeout:g} s")
    except KeyboardInterrupt:
        for ref in pending:
            ray.cancel(ref, force=True)
        raise


def configured_address(settings) -> str | None:
    """The server setting `tilelsp.ray.address` ({"ray": {"address": ...}} or a flat "ray.address"), or None."""
    extra = getattr(settings, "extra", None) or {}
    section = extra.get("ray")
    value = section.get("address") if isinstance(section, dict) else extra.get("ray.address")
    return value if isinstance(value, str) and value.strip() else None
