"""Verify / Benchmark: the `tilelsp verify` command line, and its JSON result as a message and diagnostics.

The command runs user code, so it only ever runs in a subprocess (`worker.run_process`), with a
timeout, a memory limit and cancellation, and only when the workspace is trusted.
"""
from __future__ import annotations

import json
import sys

from tilelang_core.diagnostics import Diagnostic, Severity
from tilelang_core.source import Span

UNTRUSTED = ("tilelsp will not run code from this workspace until you trust it: set "
             "`tilelsp.trustWorkspace` to true (verify and benchmark execute the kernel factory)")


def verify_argv(path: str, kernel: str, device: str = "auto", bench: bool = False, timeout: int = 60) -> list[str]:
    """The `tilelsp verify FILE --kernel NAME --json [--device D] [--bench]` command line."""
    argv = [sys.executable, "-m", "tilelsp", "verify", path, "--kernel", kernel, "--json",
            "--device", device, "--timeout", str(timeout)]
    return argv + (["--bench"] if bench else [])


def _pick(obj: dict, *names, default=None):
    for n in names:
        if n in obj and obj[n] is not None:
            return obj[n]
    return default


def _first_result(data, kernel: str) -> dict:
    if isinstance(data, list):
        data = next((d for d in data if isinstance(d, dict) and d.get("kernel") in (kernel, None)), data[0] if data else {})
    if isinstance(data, dict):
        for key in ("results", "kernels"):
            if isinstance(data.get(key), list) and data[key]:
                return _first_result(data[key], kernel)
    return data if isinstance(data, dict) else {}


def parse_result(code: int, stdout: str, stderr: str, kernel: str) -> dict:
    """`{passed, maxAbsErr, maxRelErr, timeMs, device, message}` from the command's exit code and output."""
    if code == -1:
        return _fail(f"verify of `{kernel}` timed out ({stderr}); the process was killed")
    if code == -2:
        return _fail(f"verify of `{kernel}` was cancelled")
    try:
        data = _first_result(json.loads(stdout.strip().splitlines()[-1] if stdout.strip() else ""), kernel)
    except (ValueError, IndexError):
        tail = (stderr.strip().splitlines() or ["no output"])[-1]
        return _fail(f"verify of `{kernel}` failed (exit code {code}): {tail}")
    passed = bool(_pick(data, "passed", "ok", default=code == 0))
    out = {"passed": passed, "maxAbsErr": _pick(data, "maxAbsErr", "max_abs_err"),
           "maxRelErr": _pick(data, "maxRelErr", "max_rel_err"), "timeMs": _pick(data, "timeMs", "time_ms"),
           "device": _pick(data, "device", default="?"), "message": _pick(data, "message", "error", default="")}
    if not out["message"]:
        out["message"] = summary(kernel, out)
    return out


def _fail(message: str) -> dict:
    return {"passed": False, "maxAbsErr": None, "maxRelErr": None, "timeMs": None, "device": None,
            "message": message, "failed": True}


def summary(kernel: str, r: dict) -> str:
    """A one-line human summary of a verify result."""
    verdict = "passed" if r.get("passed") else "FAILED"
    bits = [f"`{kernel}` {verdict} on {r.get('device') or '?'}"]
    if r.get("maxAbsErr") is not None:
        bits.append(f"max abs err {r['maxAbsErr']:.3g}")
    if r.get("maxRelErr") is not None:
        bits.append(f"max rel err {r['maxRelErr']:.3g}")
    if r.get("timeMs") is not None:
        bits.append(f"{r['timeMs']:.3f} ms")
    return ", ".join(bits)


def result_diagnostics(result: dict, kernel: str, span: Span) -> list[Diagnostic]:
    """The verify result as diagnostics on the kernel's name (an info when it passed)."""
    if result.get("passed"):
        return [Diagnostic("verify-passed", Severity.INFO, summary(kernel, result), span, kernel=kernel)]
    code = "verify-failed" if result.get("failed") or result.get("maxAbsErr") is None else "verify-mismatch"
    return [Diagnostic(code, Severity.ERROR, result.get("message") or summary(kernel, result), span, kernel=kernel)]
