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


def findings_of(rec: dict) -> list[dict]:
    """The sanitizer's and the metamorphic oracles' findings of a record (dicts with line, column, code, ...)."""
    return list(rec.get("sanitizer") or ()) + list((rec.get("metamorphic") or {}).get("findings") or ())


def verify_argv(path: str, kernel: str, device: str = "auto", bench: bool = False, timeout: int = 60,
                sanitize: bool = False, metamorphic: bool = False) -> list[str]:
    """The `tilelsp verify FILE --kernel NAME --json [--device D] [--bench] [--sanitize] [--metamorphic]` command
    line."""
    argv = [sys.executable, "-m", "tilelsp", "verify", path, "--kernel", kernel, "--json",
            "--device", device, "--timeout", str(timeout)]
    return (argv + (["--bench"] if bench else []) + (["--sanitize"] if sanitize else [])
            + (["--metamorphic"] if metamorphic else []))


def _pick(obj: dict, *names, default=None):
    for n in names:
        if n in obj and obj[n] is not None:
            return obj[n]
    return default


def _records(stdout: str, kernel: str) -> list[dict]:
    """The JSON records `tilelsp verify --json` printed (one per line, or a list/object), for `kernel` first."""
    recs = []
    for line in stdout.splitlines():
        line = line.strip()
        if line.startswith(("{", "[")):
            data = json.loads(line)
            data = data.get("results") or data.get("kernels") or [data] if isinstance(data, dict) else data
            recs.extend(d for d in data if isinstance(d, dict))
    mine = [r for r in recs if r.get("kernel") == kernel]
    return mine or recs


def _max(values):
    values = [v for v in values if isinstance(v, (int, float))]
    return max(values) if values else None


def parse_result(code: int, stdout: str, stderr: str, kernel: str) -> dict:
    """`{passed, maxAbsErr, maxRelErr, timeMs, device, message}` from the command's exit code and output
    (several instances of one kernel are aggregated: all must pass; the worst errors are reported)."""
    if code == -1:
        return _fail(f"verify of `{kernel}` timed out ({stderr}); the process was killed")
    if code == -2:
        return _fail(f"verify of `{kernel}` was cancelled")
    try:
        recs = _records(stdout, kernel)
    except ValueError:
        recs = []
    if not recs:
        tail = (stderr.strip().splitlines() or ["no output"])[-1]
        return _fail(f"verify of `{kernel}` failed (exit code {code}): {tail}")
    out = {"passed": all(bool(_pick(r, "passed", "ok", default=False)) for r in recs),
           "maxAbsErr": _max(_pick(r, "maxAbsErr", "max_abs_err") for r in recs),
           "maxRelErr": _max(_pick(r, "maxRelErr", "max_rel_err") for r in recs),
           "timeMs": _max(_pick(r, "bench_ms", "timeMs", "time_ms") for r in recs),
           "device": _pick(recs[0], "device", default="?"),
           "message": "; ".join(m for m in (_pick(r, "message", "error", default="") for r in recs) if m),
           "findings": [f for r in recs for f in findings_of(r)]}
    if not out["message"] or out["passed"]:
        out["message"] = summary(kernel, out) + (f" ({out['message']})" if out["message"] else "")
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
    """The verify result as diagnostics on the kernel's name (an info when it passed); the sanitizer's findings
    at their own lines."""
    if result.get("findings"):
        from tilelang_core.verify.sanitize import finding_from_dict

        return [finding_from_dict(f) for f in result["findings"]]
    if result.get("passed"):
        return [Diagnostic("verify-passed", Severity.INFO, summary(kernel, result), span, kernel=kernel)]
    code = "verify-failed" if result.get("failed") or result.get("maxAbsErr") is None else "verify-mismatch"
    return [Diagnostic(code, Severity.ERROR, result.get("message") or summary(kernel, result), span, kernel=kernel)]
