"""Cost and yield of `tilelsp verify --metamorphic`: for each file (default examples/*.py, the clean and buggy
kernels of tests/verify/oracle_cases), the wall time of a plain CPU verify and of a metamorphic one (each a fresh
child process, as the CLI runs them; the fastest of --rep), their ratio (the target is at most 10x), the
configurations tried and the findings with their lines.

    .venv/bin/python benchmarks/metamorphic_cost.py [FILES...] [--rep N] [--json OUT]

The CPU artifact cache is warm after the first run of a file, so the figures are the steady state an editor sees
(a cold cache adds each configuration's LLVM build to both sides' first run).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CASES = ROOT / "tests/verify/oracle_cases"


def timed(path: Path, rep: int, metamorphic: bool) -> tuple[float, list[dict]]:
    """The fastest wall time of `rep` verify runs (after one warm-up) and the last run's records."""
    from tilelang_core.verify.runner import verify_file

    records = verify_file(str(path), device="cpu", timeout=600, metamorphic=metamorphic)
    best = float("inf")
    for _ in range(rep):
        start = time.perf_counter()
        records = verify_file(str(path), device="cpu", timeout=600, metamorphic=metamorphic)
        best = min(best, time.perf_counter() - start)
    return best, records


def measure(path: Path, rep: int) -> dict:
    """One row per file: plain and metamorphic seconds, ratio, configs tried, findings (code@line)."""
    plain, _ = timed(path, rep, False)
    meta, records = timed(path, rep, True)
    metas = [r.get("metamorphic") or {} for r in records]
    return {"file": str(path.relative_to(ROOT)), "plain_s": round(plain, 2), "metamorphic_s": round(meta, 2),
            "ratio": round(meta / plain, 2), "configs": [m.get("configs") for m in metas],
            "findings": [f"{f['code']}@{f['line']}" for m in metas for f in m.get("findings") or ()],
            "failed": [r.get("message") for r in records if not r.get("metamorphic")]}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--rep", type=int, default=1)
    ap.add_argument("--json", metavar="OUT")
    args = ap.parse_args(argv)
    files = [Path(f).resolve() for f in args.files] or sorted((ROOT / "examples").glob("*.py")) + sorted(
        (CASES / "clean").glob("*.py")) + sorted((CASES / "bugs").glob("*.py"))
    rows = []
    for path in files:
        row = measure(path, args.rep)
        rows.append(row)
        print(f"{row['file']:58s} plain {row['plain_s']:6.2f} s  metamorphic {row['metamorphic_s']:6.2f} s  "
              f"x{row['ratio']:<5}  {' '.join(row['findings']) or '-'}", flush=True)
    worst = max(r["ratio"] for r in rows)
    print(f"worst ratio x{worst} (target <= 10)")
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
