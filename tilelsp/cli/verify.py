"""`tilelsp verify FILE`: build each kernel instance, run it on random inputs in a child process and compare
with the file's reference (`ref_program` or `# tilelsp: reference=NAME`) or with the CPU backend.

Exit status: 0 every instance passed, 1 a mismatch or a failure (build error, crash, timeout), 2 usage.
The file is first read and checked as `check` does (loading.py): check errors exit 1, unreadable files 2,
a file without kernels 0 with a note.
"""
from __future__ import annotations

import json
import os
import sys

from tilelsp.features.verify import findings_of

EXIT_OK, EXIT_FAIL, EXIT_USAGE = 0, 1, 2
_KEYS = ("file", "kernel", "instance", "device", "passed", "max_abs_err", "max_rel_err", "time_ms", "message")


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.3g}"


def format_text(rec: dict) -> str:
    """One human-readable result line (plus the message when it failed)."""
    status = "PASS" if rec.get("passed") else "FAIL"
    who = rec.get("instance") or rec.get("kernel") or "?"
    line = (f"{status} {rec.get('file')} {who} [{rec.get('device')}]  max abs err {_fmt(rec.get('max_abs_err'))}"
            f"  max rel err {_fmt(rec.get('max_rel_err'))}  time {_fmt(rec.get('time_ms'))} ms")
    if rec.get("bench_ms") is not None:
        line += f"  bench {_fmt(rec['bench_ms'])} ms"
    msg = rec.get("message") or ""
    findings = findings_of(rec)
    meta = rec.get("metamorphic")
    if meta:
        none = "no other configuration tried (none builds, or the factory's arguments are only known at run time)"
        tried = "; ".join(meta.get("configs") or []) or none
        line += f"\n    metamorphic: {tried}" + (f"; perturbed {meta['rows']}" if meta.get("rows") else "")
    if findings:  # the findings, one per line, as `check` prints diagnostics
        return line + "".join(f"\n{rec.get('file')}:{f['line']}:{f['column']}: {f['severity']}[{f['code']}] "
                              f"{f['message']}" for f in findings)
    if msg and (not rec.get("passed") or "nothing was compared" in msg):
        line += "\n    " + msg.replace("\n", "\n    ")
    return line


def to_json(rec: dict) -> dict:
    """The stable JSON record: file, kernel, instance, device, passed, errors, time_ms, message (+ bench_ms, and
    with --sanitize the findings: `sanitizer`, a list of diagnostics with line, column, code, message; with
    --metamorphic `metamorphic`: configs, rows and findings; `inputs`: where the values of the integer tensors the
    kernel indexes with came from)."""
    out = {k: rec.get(k) for k in _KEYS}
    for key in ("bench_ms", "sanitizer", "metamorphic", "inputs"):
        if key in rec:
            out[key] = rec[key]
    return out


def _on_ray(address: str, args, loaded, timeout: float) -> list[dict]:
    """The records of a verify (or bench) run on the Ray cluster at `address` (docs/ray.md)."""
    from tilelang_core.verify.child import select_kernels

    from tilelsp.cluster.verify import verify_on_ray

    kernel = getattr(args, "kernel", None)
    chosen = select_kernels(loaded.result.kernels, kernel)
    if not chosen:
        names = sorted({k.factory or k.name for k in loaded.result.kernels})
        return [{"file": args.file, "usage": True, "available": names,
                 "message": f"no kernel named {kernel!r} in {args.file}"}]
    print(f"tilelsp verify: on the Ray cluster {address}", file=sys.stderr)
    return verify_on_ray(address, args.file, loaded.text, chosen, kernel, getattr(args, "device", "auto"),
                         getattr(args, "bench", False), timeout)


def run_verify(args) -> int:
    """Entry point used by `tilelsp verify` (args: file, kernel, device, json, timeout, bench, sanitize,
    metamorphic)."""
    from tilelang_core.verify.runner import verify_file
    from tilelang_core.verify.sanitize import RUNTIME_CHECKED

    from .loading import load_checked
    from tilelsp.cluster.connection import RayUnavailable

    path = args.file
    timeout = getattr(args, "timeout", 60.0) or 60.0
    if timeout <= 0:
        print("tilelsp verify: --timeout must be positive", file=sys.stderr)
        return EXIT_USAGE
    # unreadable, error-laden or kernel-less files stop here, as in check (--sanitize runs kernels that only the
    # dataflow checks reject: it observes those bugs at run time)
    sanitize = getattr(args, "sanitize", False)
    metamorphic = getattr(args, "metamorphic", False)
    loaded = load_checked(path, "verify", tolerate=RUNTIME_CHECKED if sanitize else ())
    if isinstance(loaded, int):
        return loaded
    address = getattr(args, "ray", None) or os.environ.get("TILELSP_RAY_ADDRESS")
    try:
        if address and not sanitize and not metamorphic:
            records = _on_ray(address, args, loaded, timeout)
        else:
            records = verify_file(path, kernel=getattr(args, "kernel", None), device=getattr(args, "device", "auto"),
                                  timeout=timeout, bench=getattr(args, "bench", False),
                                  sanitize=sanitize, metamorphic=metamorphic)
    except (ValueError, RayUnavailable) as exc:
        print(f"tilelsp verify: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if any(r.get("usage") for r in records):
        rec = next(r for r in records if r.get("usage"))
        avail = ", ".join(rec.get("available") or []) or "none"
        print(f"tilelsp verify: {rec['message']} (kernels: {avail})", file=sys.stderr)
        return EXIT_USAGE
    for rec in records:
        print(json.dumps(to_json(rec)) if getattr(args, "json", False) else format_text(rec))
    return EXIT_OK if records and all(r.get("passed") for r in records) else EXIT_FAIL
