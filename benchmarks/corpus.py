"""Compatibility corpus run: check (and optionally lower) every TileLang file under a folder; count outcomes.

Usage: python benchmarks/corpus.py /path/to/tilelang/examples [--lower cpu|sm_90a] [--json out.json]
The corpus is never part of this repository (fetch tile-ai/tilelang elsewhere).
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
import time
import traceback
from pathlib import Path


def check_file(path: Path, lower_target: str | None) -> dict:
    """Check one file; with a target, also lower every error-free kernel instance."""
    from tilelang_core import check_source

    row = {"path": str(path), "kernels": 0, "errors": [], "crash": None, "lowered": 0, "lower_failures": []}
    try:
        result = check_source(path.read_text(encoding="utf-8", errors="replace"), str(path))
    except Exception:  # the checker must never crash; count it
        row["crash"] = traceback.format_exc(limit=3)
        return row
    row["kernels"] = len(result.kernels)
    row["errors"] = [f"{d.span.line}:{d.code}: {d.message[:120]}" for d in result.errors]
    if lower_target and not result.errors:
        from tilelang_core import lower

        for func in result.kernels:
            try:
                lower(func, target=lower_target)
                row["lowered"] += 1
            except Exception as exc:
                row["lower_failures"].append(f"{func.name}: {type(exc).__name__}: {str(exc)[:160]}")
    return row


def main(argv=None) -> int:
    """Run the corpus and print a summary table."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("folder")
    ap.add_argument("--lower", default=None)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    files = sorted(p for p in Path(args.folder).rglob("*.py") if not p.name.startswith("test_"))
    t0 = time.perf_counter()
    rows = [check_file(p, args.lower) for p in files]
    codes = collections.Counter(e.split(":")[1] for r in rows for e in r["errors"])
    summary = {
        "files": len(rows),
        "files_with_kernels": sum(r["kernels"] > 0 for r in rows),
        "kernel_instances": sum(r["kernels"] for r in rows),
        "files_with_errors": sum(bool(r["errors"]) for r in rows),
        "crashes": sum(bool(r["crash"]) for r in rows),
        "error_codes": dict(codes.most_common()),
        "seconds": round(time.perf_counter() - t0, 2),
    }
    if args.lower:
        summary["lowered"] = sum(r["lowered"] for r in rows)
        summary["lower_failures"] = sum(len(r["lower_failures"]) for r in rows)
    print(json.dumps(summary, indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "files": rows}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
