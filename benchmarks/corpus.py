"""Compatibility corpus runs over a tile-ai/tilelang `examples/` checkout (never part of this repository).

Static mode: check (and with --lower, lower) every file without running it:
    python benchmarks/corpus.py /path/to/tilelang/examples [--lower cpu|sm_90a] [--json out.json]
Run-the-main mode: each kernel file runs as `__main__` under our alias and a GPU shim (corpus_run.py):
    python benchmarks/corpus.py /path/to/examples --run cuda|cpu [-j 2] [--timeout 180] [--only SUBSTR ...]
        [--reference corpus_real_tilelang.md] [--cuda-dir DIR] [--json out.json]
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
    ap.add_argument("--run", choices=("cuda", "cpu"), default=None, help="run each file's __main__ (see corpus_run)")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    ap.add_argument("--timeout", type=float, default=180.0)
    ap.add_argument("--only", nargs="*", default=[])
    ap.add_argument("--reference", default=None, help="the research table of the real TileLang's mode C")
    ap.add_argument("--cuda-dir", default=None, help="keep each lowered file's CUDA source here")
    args = ap.parse_args(argv)
    if args.run:
        return run_mode(args)
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


def run_mode(args) -> int:
    """The run-the-main mode: progress per file, a per-cause table, JSON."""
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    import corpus_run

    t0 = time.perf_counter()
    rows = corpus_run.run_corpus(Path(args.folder), args.run, args.jobs, args.timeout, args.only,
                                 Path(args.cuda_dir) if args.cuda_dir else None)
    reference = corpus_run.reference_lowered(Path(args.reference)) if args.reference else None
    summary = corpus_run.summarize(rows, args.run, reference)
    summary["seconds"] = round(time.perf_counter() - t0, 1)
    corpus_run.print_table(summary)
    if args.json:
        Path(args.json).write_text(json.dumps({"summary": summary, "files": rows}, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
