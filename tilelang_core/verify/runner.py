"""Run verification of a file in a child process with a timeout and a memory limit (`verify_file`).

A crash, a timeout or a kill becomes a clean failed record; the parent never imports tvm or user code.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[2])  # the directory holding tilelang_core/
DEFAULT_MEM_GB = float(os.environ.get("TILELSP_VERIFY_MEM_GB", "24"))


def resolve_device(device: str) -> str:
    """'cpu', 'cuda', or 'auto' when only the child (through torch) can tell."""
    if device in ("cpu", "cuda"):
        return device
    if device != "auto":
        raise ValueError(f"unknown device {device!r}: use auto, cpu or cuda")
    if os.environ.get("CUDA_VISIBLE_DEVICES", None) == "":
        return "cpu"
    try:
        out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=10, text=True)
        if out.returncode == 0 and "GPU" in out.stdout:
            return "cuda"
    except (OSError, subprocess.TimeoutExpired):
        pass
    # no nvidia-smi but a driver node: let the child ask torch (and skip the address-space cap CUDA dislikes)
    return "auto" if os.path.exists("/dev/nvidiactl") else "cpu"


def _limits(mem_gb: float | None):
    """preexec_fn for the child: die with the parent (it runs in its own session, so a killed or cancelled
    `tilelsp verify` must not leave it running) and cap its address space (CPU runs only: CUDA maps huge
    virtual ranges)."""
    if sys.platform != "linux":
        return None

    def apply():
        import ctypes
        import resource
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        if mem_gb is not None:
            limit = int(mem_gb * (1 << 30))
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return apply


def _env() -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_ROOT, env.get("PYTHONPATH", "")) if p)
    env.setdefault("PYTHONUNBUFFERED", "1")
    return env


def _read(path: str) -> list[dict]:
    try:
        with open(path, encoding="utf-8") as fh:
            return [json.loads(line) for line in fh if line.strip()]
    except (OSError, ValueError):
        return []


def _tail(text: str, n: int = 6) -> str:
    lines = [ln for ln in text.strip().splitlines() if ln.strip()]
    return "\n".join(lines[-n:])


def verify_file(path: str, kernel: str | None = None, device: str = "auto", timeout: float = 60.0,
                bench: bool = False, mem_gb: float | None = DEFAULT_MEM_GB, sanitize: bool = False,
                metamorphic: bool = False) -> list[dict]:
    """Verify the kernels of `path` in a child process; one record per kernel instance (with `sanitize`, each
    instance also runs in the CPU backend's instrumented mode and its findings come in the record; with
    `metamorphic`, at other tile configurations and with one row block of its inputs perturbed)."""
    device = resolve_device(device)
    with tempfile.TemporaryDirectory(prefix="tilelsp-verify-") as tmp:
        req, res = os.path.join(tmp, "request.json"), os.path.join(tmp, "result.jsonl")
        with open(req, "w", encoding="utf-8") as fh:
            json.dump({"file": os.path.abspath(path), "kernel": kernel, "device": device, "bench": bench,
                       "sanitize": sanitize, "metamorphic": metamorphic}, fh)
        cmd = [sys.executable, "-m", "tilelang_core.verify.child", req, res]
        start = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=_env(),
                                start_new_session=True, preexec_fn=_limits(mem_gb if device == "cpu" else None))
        try:
            output, _ = proc.communicate(timeout=timeout)
            timed_out = False
        except subprocess.TimeoutExpired:
            _kill(proc)
            output, _ = proc.communicate()
            timed_out = True
        records = _read(res)
    for r in records:
        r["file"] = path
    return records + _failure(path, kernel, device, proc.returncode, timed_out, timeout, output, records, start)


def _failure(path, kernel, device, rc, timed_out, timeout, output, records, start) -> list[dict]:
    """A failure record when the child timed out or died before reporting everything."""
    if not timed_out and rc == 0:
        return []
    base = {"file": path, "kernel": kernel, "instance": "", "device": device, "passed": False,
            "max_abs_err": None, "max_rel_err": None, "time_ms": None}
    if timed_out:
        done = f" after {len(records)} finished instance(s)" if records else ""
        msg = (f"timed out after {timeout:g} s{done} (the factory, the build or the kernel did not finish); "
               "raise --timeout or look for an endless loop")
    elif rc is not None and rc < 0:
        msg = f"the verification process was killed by signal {-rc} ({_signame(-rc)})"
        msg += (": out of memory?" if -rc in (signal.SIGKILL,) else "") + _with_output(output)
    else:
        msg = f"the verification process failed (exit {rc})" + _with_output(output)
    return [{**base, "message": msg, "total_s": round(time.perf_counter() - start, 3)}]


def _with_output(output: str) -> str:
    tail = _tail(output or "")
    return f":\n{tail}" if tail else ""


def _signame(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return "unknown"


def _kill(proc) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()
