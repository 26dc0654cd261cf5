"""Long run of the differential testing (tests/differential/kernelgen.py): random valid TileLang kernels on
the CPU backend against a torch reference of the same program.

Property: the checks accept every generated kernel, it builds for the CPU and its outputs match torch.
Usage: `.venv/bin/python benchmarks/fuzz_differential.py --count 1000 [--seed 1]`. Writes
benchmarks/results/fuzz_differential.json (per-family counts, every distinct problem with its program source)
and exits 1 on any problem.
"""
from __future__ import annotations

import argparse
import collections
import datetime
import json
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.differential.kernelgen import random_program, run, source  # noqa: E402


def main(argv=None) -> int:
    """Generate, run and compare; write the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "fuzz_differential.json"))
    args = ap.parse_args(argv)
    rng = random.Random(args.seed)
    families, problems, examples = collections.Counter(), collections.Counter(), {}
    start = time.perf_counter()
    for n in range(1, args.count + 1):
        program = random_program(rng)
        families[program.family] += 1
        try:
            problem = run(program)
        except Exception as exc:  # noqa: BLE001 - recorded as a problem of this program
            problem = f"exception: {type(exc).__name__}: {str(exc)[:200]}"
        if problem:
            key = f"{program.family}: {problem[:140]}"
            problems[key] += 1
            examples.setdefault(key, source(program))
        if n % 100 == 0:
            print(f"  {n} kernels, {sum(problems.values())} problems, {time.perf_counter() - start:.0f} s", flush=True)
    report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "load_average": os.getloadavg(), "seed": args.seed, "kernels": args.count,
              "families": dict(families), "seconds": round(time.perf_counter() - start, 1),
              "problems": dict(problems), "examples": examples}
    Path(args.out).write_text(json.dumps(report, indent=1))
    print(f"{args.count} kernels {dict(families)} in {report['seconds']} s, problems {sum(problems.values())}")
    for problem in problems:
        print("  problem:", problem)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
