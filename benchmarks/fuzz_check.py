"""Long run of the frontend mutation fuzzing (tests/fuzz/mutants.py) and of lowering check-clean mutants.

Property: `check_source` on every mutant raises nothing, reports no internal-error and takes at most 2 s;
with --lower N, N check-clean mutants (one mutation each) lower for sm_90a with no internal-error and no raw
TVM 'Check failed' text. One process, one core.
Usage: `.venv/bin/python benchmarks/fuzz_check.py --count 100000 [--seed 1] [--lower 1000]`.
Writes benchmarks/results/fuzz_check.json (counts, slowest run, every distinct problem with one mutant) and
exits 1 when any property failed.
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

from tests.fuzz.mutants import LIMIT_S, check_one, lower_one, mutants  # noqa: E402


def fuzz_check(count: int, seed: int, progress=lambda partial: None) -> dict:
    """Check `count` mutants; counts, the slowest run and one example per distinct problem. `progress` gets the
    partial result every 10,000 mutants (so an interrupted long run still leaves its figures)."""
    rng, problems, examples = random.Random(seed), collections.Counter(), {}
    start, slowest, n = time.perf_counter(), (0.0, ""), 0

    def summary():
        return {"mutants": n, "seconds": round(time.perf_counter() - start, 1), "limit_s": LIMIT_S,
                "slowest_s": round(slowest[0], 3), "slowest_seed": slowest[1], "problems": dict(problems),
                "examples": examples}

    for n, (name, text) in enumerate(mutants(rng, count), 1):
        seconds, problem = check_one(text)
        slowest = max(slowest, (seconds, name))
        if problem:
            if problem[:160] not in problems:
                print(f"  new problem (mutant {n} of {name}): {problem[:160]}", flush=True)
            problems[problem[:160]] += 1
            examples.setdefault(problem[:160], {"seed_file": name, "mutant": text[:20000]})
        if n % 10000 == 0:
            print(f"  {n} mutants, {sum(problems.values())} problems, {time.perf_counter() - start:.0f} s", flush=True)
            progress(summary())
    return summary()


def fuzz_lower(count: int, seed: int) -> dict:
    """Lower `count` check-clean single-mutation mutants for sm_90a."""
    rng, problems, examples, lowered, tried = random.Random(seed), collections.Counter(), {}, 0, 0
    start = time.perf_counter()
    for name, text in mutants(rng, count * 100, max_mutations=1):
        tried += 1
        ok, problem = lower_one(text)
        lowered += ok
        if problem:
            problems[problem[:160]] += 1
            examples.setdefault(problem[:160], {"seed_file": name, "mutant": text[:20000]})
        if lowered >= count:
            break
    return {"lowered": lowered, "mutants_tried": tried, "seconds": round(time.perf_counter() - start, 1),
            "problems": dict(problems), "examples": examples}


def main(argv=None) -> int:
    """Run the fuzzing and write the results."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--count", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--lower", type=int, default=0, help="also lower this many check-clean mutants (needs tvm)")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "fuzz_check.json"))
    args = ap.parse_args(argv)
    report = {"date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
              "load_average": os.getloadavg(), "seed": args.seed}
    def save(partial):
        report["check"] = partial
        Path(args.out).write_text(json.dumps(report, indent=1))

    report["check"] = fuzz_check(args.count, args.seed, save)
    c = report["check"]
    print(f"check: {c['mutants']} mutants in {c['seconds']} s, slowest {c['slowest_s']} s, "
          f"problems {sum(c['problems'].values())}")
    if args.lower:
        report["lower"] = fuzz_lower(args.lower, args.seed)
        lo = report["lower"]
        print(f"lower: {lo['lowered']} lowerings in {lo['seconds']} s, problems {sum(lo['problems'].values())}")
    Path(args.out).write_text(json.dumps(report, indent=1))
    failed = report["check"]["problems"] or report.get("lower", {}).get("problems")
    for problem in list(report["check"]["problems"]) + list(report.get("lower", {}).get("problems", {})):
        print("  problem:", problem)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
