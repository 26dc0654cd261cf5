"""pytest plugin for the peer-suite harness: runs a real TileLang test file unchanged on tilelang_core.

Loaded by `benchmarks/peer_suite.py` as `-p peer_plugin` in one pytest process per test file. It installs the alias
(`import tilelang` is tilelang_core) and the stand-in GPU of `tilelang_core.runtime.cpu_device` (CUDA tensors live on the CPU) before the file is collected,
then, per `PEER_MODE`:

* `cpu`: every kernel builds for the CPU backend and runs there, so the test's own checks run;
* `cuda`: as `cpu`, and every kernel is also lowered for sm_90a and compiled with nvcc first (the outcome of each
  build is recorded with the test; `get_kernel_source()` gives the CUDA kernels, from the first `__global__`
  function on, so tests of the generated code read ours: TileLang's source #includes the device library that
  ours inlines before the kernels), except a kernel the test builds for a CPU target (`target="c"` / `"llvm"`: not a GPU kernel);
* `gpu`: nothing is patched: kernels build for the GPU the process sees (a machine with one).

Each test writes one JSON line to `PEER_OUT` when it starts and one when it ends: outcome, exception type and
message, the innermost frames, and (cuda) the kernel builds. `peer_outcomes.classify` turns them into outcomes.
"""
from __future__ import annotations

import json
import os
import signal
import sys
import time
import traceback
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
MODE = os.environ.get("PEER_MODE", "cpu")
TEST_TIMEOUT = float(os.environ.get("PEER_TEST_TIMEOUT", "240"))
_builds: list[dict] = []


class PeerTestTimeout(BaseException):
    """Raised in the main thread when one test runs past PEER_TEST_TIMEOUT (escapes `except Exception`)."""


def _write(record: dict) -> None:
    with open(os.environ["PEER_OUT"], "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, default=str) + "\n")


def _patch_cpu() -> None:
    from tilelang_core.runtime import cpu_device

    cpu_device.route_kernels_to_cpu()


def _patch_cuda() -> None:
    from tilelang_core.runtime import artifact, jit_kernel
    from tilelang_core.target import parse_target

    _patch_cpu()
    cpu_backend = jit_kernel._CpuBackend
    routed_target = jit_kernel.machine_target
    asked = {"cpu": False}  # whether the kernel being built was asked for a CPU target

    def machine_target(target):
        try:
            asked["cpu"] = parse_target(target, device=jit_kernel.device_target).kind == "cpu"
        except Exception:  # noqa: BLE001 -- the routed call reports a bad target itself
            asked["cpu"] = False
        return routed_target(target)

    class CudaThenCpuBackend(cpu_backend):
        """Lower for sm_90a and compile with nvcc (recorded), then run on the CPU backend so the test goes on."""

        def __init__(self, func):
            self.cuda_source = None
            if asked["cpu"]:
                return super().__init__(func)
            entry = {"kernel": getattr(func, "name", "?")}
            t0 = time.perf_counter()
            try:
                self.cuda_source = artifact.build_artifact(func, "sm_90a").source
                entry["ok"] = True
            except Exception as exc:  # noqa: BLE001 -- every build outcome is data here
                entry.update(ok=False, error=f"{type(exc).__name__}: {str(exc)[-600:]}")
            entry["seconds"] = round(time.perf_counter() - t0, 2)
            _builds.append(entry)
            try:
                super().__init__(func)
            except Exception:
                entry["cpu_rejected"] = True  # the program is rejected on the CPU too: not a kernel the test built
                raise

        def source(self) -> str:
            if self.cuda_source is None:
                return super().source()
            at = self.cuda_source.find('extern "C" __global__')
            return self.cuda_source[max(at, 0):]

    jit_kernel._CpuBackend = CudaThenCpuBackend
    jit_kernel.machine_target = machine_target


def pytest_configure(config) -> None:
    """Install the alias and the shim before any test module imports tilelang."""
    sys.path.insert(0, str(HERE.parent))
    import tilelang_core

    tilelang_core.install_alias(force=True)
    if MODE != "gpu":
        from tilelang_core.runtime import cpu_device

        cpu_device.install()
        {"cpu": _patch_cpu, "cuda": _patch_cuda}[MODE]()


def _frames(tb) -> list[dict]:
    return [{"file": f.filename, "line": f.lineno, "func": f.name} for f in traceback.extract_tb(tb)][-10:]


def _exception(exc: BaseException) -> dict:
    info = {"type": type(exc).__name__, "module": type(exc).__module__, "message": str(exc)[:800],
            "frames": _frames(exc.__traceback__)}
    codes = [getattr(d, "code", None) for d in getattr(exc, "diagnostics", []) or []]
    if codes:
        info["codes"] = codes
    return info


def _on_alarm(signum, frame):
    raise PeerTestTimeout(f"test ran past {TEST_TIMEOUT:.0f} s")


def pytest_collectreport(report) -> None:
    """A module that fails to import (a missing decorator, a crash at import) is one record for all its tests."""
    if report.failed:
        _write({"event": "collect-error", "nodeid": report.nodeid, "tail": str(report.longrepr)[-3000:]})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    """Record the start of each test (a file killed for time names the test that hung), arm the per-test alarm."""
    _write({"event": "start", "nodeid": item.nodeid})
    _builds.clear()
    signal.signal(signal.SIGALRM, _on_alarm)
    signal.setitimer(signal.ITIMER_REAL, TEST_TIMEOUT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """One record per test phase that fails, and one for the call phase (or a skip)."""
    outcome = yield
    report = outcome.get_result()
    if report.when != "call" and report.passed:
        return
    record = {"event": "end", "nodeid": item.nodeid, "when": report.when, "outcome": report.outcome,
              "seconds": round(report.duration, 2), "builds": list(_builds)}
    if report.skipped:
        record["skip_reason"] = str(report.longrepr[-1]) if isinstance(report.longrepr, tuple) else str(report.longrepr)
    elif call.excinfo is not None and report.failed:
        record["exception"] = _exception(call.excinfo.value)
    if hasattr(report, "wasxfail"):
        record["xfail"] = report.wasxfail
    _write(record)
