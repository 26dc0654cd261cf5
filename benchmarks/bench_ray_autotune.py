"""`tilelsp autotune --ray local` with 1 and 2 worker CPUs, and a local search, over 16 configs with the CPU backend
as the device: wall time, speed-up and winners.

    .venv/bin/python benchmarks/bench_ray_autotune.py [FILE] [--configs 16] [--json PATH]

FILE defaults to examples/gemm.py (its 16 gemm_configs, at M = N = K = 512 unless --args says otherwise). Every run is a fresh `tilelsp autotune` process with an
empty artifact cache (so every config really compiles) against a snapshot of the tree; TILELSP_RAY_CPUS sets the
local cluster's CPUs. The target: 2 workers at least 1.6x faster than 1.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(work: Path, file: str, configs: int, ray_cpus: int | None, args: list) -> dict:
    """One `tilelsp autotune` run: wall seconds and its JSON result."""
    cache = Path(tempfile.mkdtemp(prefix="cache-", dir=work))
    env = dict(os.environ, PYTHONPATH=str(work), TILELSP_CACHE_DIR=str(cache), TILELSP_AUTOTUNE_CACHE="0")
    env.pop("TILELSP_RAY_ADDRESS", None)
    cmd = [sys.executable, "-m", "tilelsp", "autotune", file, "--device", "cpu", "--configs", str(configs),
           "--warmup", "2", "--rep", "5", "--json", *args]
    if ray_cpus:
        env["TILELSP_RAY_CPUS"] = str(ray_cpus)
        cmd += ["--ray", "local"]
    else:
        cmd += ["--jobs", "1"]
    start = time.perf_counter()
    out = subprocess.run(cmd, env=env, cwd=work, capture_output=True, text=True)
    wall = time.perf_counter() - start
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed:\n{out.stderr[-3000:]}")
    return {"wall_s": wall, "result": json.loads(out.stdout.strip().splitlines()[-1])}


def main(argv=None) -> int:
    """Run local, Ray x1 and Ray x2; print the table."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("file", nargs="?", default="examples/gemm.py")
    ap.add_argument("--configs", type=int, default=16)
    ap.add_argument("--args", default="M=512,N=512,K=512", help="the factory's call arguments (default %(default)s)")
    ap.add_argument("--json", metavar="PATH", help="also write the figures as JSON")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="tilelsp-bench-ray-") as tmp:
        work = Path(tmp)
        for package in ("tilelang_core", "tilelsp", "examples"):
            shutil.copytree(ROOT / package, work / package, ignore=shutil.ignore_patterns("__pycache__"))
        file = str(Path(args.file).resolve()) if not (work / args.file).exists() else args.file
        extra = ["--args", args.args] if args.args else []
        runs = {"local (1 process)": run(work, file, args.configs, None, extra),
                "Ray local, 1 worker CPU": run(work, file, args.configs, 1, extra),
                "Ray local, 2 worker CPUs": run(work, file, args.configs, 2, extra)}
    print(f"{'run':28s} {'wall':>9s} {'search':>9s}  {'configs timed':>13s}  winner")
    for name, r in runs.items():
        res = r["result"]
        print(f"{name:28s} {r['wall_s']:8.1f}s {res['search_s']:8.1f}s  {len(res['timings']):>13d}  "
              f"{res['best']['config']}")
    one, two = runs["Ray local, 1 worker CPU"], runs["Ray local, 2 worker CPUs"]
    speedup = one["wall_s"] / two["wall_s"]
    search_speedup = one["result"]["search_s"] / two["result"]["search_s"]
    print(f"speed-up of 2 workers over 1: {speedup:.2f}x end to end, {search_speedup:.2f}x for the search (the "
          "cluster already up; target >= 1.6x)")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": runs, "speedup": speedup, "search_speedup": search_speedup},
                                              indent=1, default=str) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
