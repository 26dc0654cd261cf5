"""`tilelsp autotune --ray local` with 1 and 2 worker CPUs, and a local search, over 16 configs with the CPU backend
as the device: wall time, speed-up and winners.

    .venv/bin/python benchmarks/bench_ray_autotune.py [FILE] [--configs 16] [--json PATH]

FILE defaults to examples/gemm.py (its 16 gemm_configs, at M = N = K = 512 unless --args says otherwise). Every run
is a fresh `tilelsp autotune` process with an empty artifact cache (so every config really compiles) against a
snapshot of the tree; TILELSP_RAY_CPUS sets the local cluster's CPUs. The target: 2 workers at least 1.6x faster
than 1, and the same winner as the local search.

Besides wall time, each Ray run's breakdown comes from the tasks' time stamps (`--json` of `tilelsp autotune`):
driver (process start, imports, check, loading the file), cluster start (ray.init), the wait for the first task
(worker start, importing tilelang_core), worker warm-up (a worker's first task: importing torch and tvm, running
the file), compiling (the builds and their reference checks, summed over tasks), the compile stage's span, and
the timing task (every kernel one after another on the CPU, then the finalists). It also prints the most 2
workers could gain over 1 (Amdahl: only the builds are shared) and a one-line verdict.
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
        raise SystemExit(f"{' '.join(cmd)} failed (exit status {out.returncode}):\n{out.stderr[-3000:]}\n"
                         f"{out.stdout[-1000:]}")
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
              f"{res['best']['config']} {res['best']['latency_ms']:.3f} ms")
    print("breakdown (s): driver = process start, imports, check, file; to first task = search start until a "
          "worker starts its first task; warm-up = that task until torch, tvm and the file are loaded (mean over "
          "workers); compile = builds summed; stage = search start to the last build; timing = the timing task")
    for name, r in runs.items():
        r["breakdown"] = breakdown(r)
        print(f"  {name:26s} " + "  ".join(f"{k} {v:.1f}" for k, v in r["breakdown"].items()))
    one, two = runs["Ray local, 1 worker CPU"], runs["Ray local, 2 worker CPUs"]
    speedup = one["wall_s"] / two["wall_s"]
    search_speedup = one["result"]["search_s"] / two["result"]["search_s"]
    stage_speedup = one["breakdown"]["stage"] / two["breakdown"]["stage"]
    builds = one["breakdown"]["compile"]  # the part more workers can share (Amdahl, from the 1-worker run)
    bound = one["wall_s"] / (one["wall_s"] - builds / 2)
    print(f"of the 1-worker run's {one['wall_s']:.1f} s, {builds:.1f} s are builds: 2 workers can at best make it "
          f"{bound:.2f}x faster end to end (1.6x needs builds >= {0.75 * one['wall_s']:.1f} s of it)")
    winners = [str(r["result"]["best"]["config"]) for r in runs.values()]
    same = len(set(winners)) == 1
    # more than the builds allow means the 1-worker run waited on something else (a worker slow to start)
    credible = speedup <= bound * 1.1
    target = f"{'meets' if speedup >= 1.6 else 'below'} the 1.6x target" if credible else \
        f"not credible: more than the {bound:.2f}x the builds allow, see 'to first task'"
    print(f"verdict: 2 workers over 1: {speedup:.2f}x end to end ({target}), "
          f"{search_speedup:.2f}x the search (cluster up), {stage_speedup:.2f}x the compile stage; "
          f"same winner as the local run: {'yes' if same else 'no'}")
    if args.json:
        Path(args.json).write_text(json.dumps({"runs": runs, "speedup": speedup, "search_speedup": search_speedup,
                                               "compile_stage_speedup": stage_speedup, "amdahl_bound": bound,
                                               "credible": credible,
                                               "same_winner": same,
                                               "load_average": os.getloadavg()}, indent=1, default=str) + "\n")
    return 0


def breakdown(run_record: dict) -> dict:
    """Seconds per phase of one run (see the module docstring); the Ray columns only for Ray runs."""
    res = run_record["result"]
    cluster = res.get("cluster_s") or 0.0
    out = {"driver": run_record["wall_s"] - res["search_s"] - cluster, "cluster": cluster}
    trace = res.get("trace") or []
    builds = [t for t in trace if t["task"] == "compile"]
    if builds:
        first = {}
        for t in sorted(builds, key=lambda t: t["start"]):
            first.setdefault(t["pid"], t)
        out["to first task"] = min(t["start"] for t in builds) - res["search_started"]
        out["warm-up"] = sum(t["loaded"] - t["start"] for t in first.values()) / len(first)
        out["compile"] = sum(t["end"] - t["loaded"] for t in builds)
        out["stage"] = max(t["end"] for t in builds) - res["search_started"]
        out["workers"] = len(first)
    out["timing"] = sum(t["end"] - t["start"] for t in trace if t["task"] == "time")
    out["search"] = res["search_s"]
    return out


if __name__ == "__main__":
    sys.exit(main())
