"""Real TileLang example files, run with their own result checks on a GPU machine from artifacts built here.

Here (tvm, nvcc, no GPU):  python benchmarks/gpu_corpus.py prepare /path/to/examples FILE... [--dir .gpu_corpus]
    snapshots tilelang_core into DIR/pkg (artifact keys digest the compiler's sources, so the GPU side must run the
    very code that built them), copies each file's folder under DIR/examples and runs the file once in
    corpus_child's gpu-build mode, which builds every kernel the file builds as an sm_90a artifact into DIR/cache
    (and runs it on the CPU backend so the file goes on to its later kernels). `--build-only` launches nothing on
    the CPU and lets the file's result checks pass unexamined (corpus_child's gpu-build-only mode): full-size
    kernels build in seconds instead of running for minutes on the CPU.
There (GPU, torch, cuda-bindings, no tvm):  python3 benchmarks/gpu_corpus.py run [--dir .gpu_corpus]
    runs every prepared file as `__main__` through `python -m tilelang_core.run` with TILELSP_CACHE_DIR=DIR/cache:
    each kernel build is a cache hit launched by our tvm-free launcher; a file passes when its main() exits 0
    (its own assert_close checks ran on the GPU). A kernel missing from the cache fails (no tvm there).
There, with apache-tvm carried too:  python3 benchmarks/gpu_corpus.py jit EXAMPLES FILE... [--jobs 8]
    runs each file through `python -m tilelang_core.run` from this checkout: every kernel is lowered and compiled
    on that machine and runs on its GPU, `--jobs` files at a time.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def prepare(examples: Path, files: list[str], out: Path, timeout: float, build_only: bool = False,
            entries: dict | None = None) -> int:
    """Copy the files' folders and build their artifacts into out/cache; prints one line per file.

    `build_only` builds without running the kernels on the CPU (corpus_child's gpu-build-only mode); `entries`
    maps a file to the call to make in it instead of running it as __main__.
    """
    (out / "examples").mkdir(parents=True, exist_ok=True)
    if (out / "pkg").exists():
        shutil.rmtree(out / "pkg")
    shutil.copytree(ROOT / "tilelang_core", out / "pkg" / "tilelang_core",
                    ignore=shutil.ignore_patterns("__pycache__"))
    listed = []
    for rel in files:
        src = examples / rel
        dst = out / "examples" / rel
        if src.parent == examples:  # a top-level file: the folder is the whole corpus, copy the file alone
            shutil.copy2(src, dst)
        elif not dst.parent.exists():
            shutil.copytree(src.parent, dst.parent, ignore=shutil.ignore_patterns("__pycache__"))
        env = dict(os.environ, TILELSP_CACHE_DIR=str(out / "cache"), TILELANG_CORE_ALIAS="force",
                   TILELSP_CORE_ROOT=str((out / "pkg").resolve()))
        t0 = time.perf_counter()
        res = out / "last_build.json"
        try:
            entry = (entries or {}).get(rel)
            subprocess.run([sys.executable, str(ROOT / "benchmarks" / "corpus_child.py"), "--mode",
                            "gpu-build-only" if build_only else "gpu-build", "--out", str(res), str(dst)]
                           + (["--entry", entry] if entry else []), env=env, timeout=timeout, capture_output=True)
            row = json.loads(res.read_text())
        except (subprocess.TimeoutExpired, OSError, ValueError) as exc:
            row = {"status": f"build failed: {type(exc).__name__}", "kernels": []}
        ok = row["status"] == "finished" and row["kernels"]
        print(f"{'built' if ok else 'FAILED':7} {time.perf_counter() - t0:6.1f}s {len(row['kernels'])} kernel(s) "
              f"{rel} {'' if ok else (row.get('error') or {}).get('message', row['status'])[:120]}", flush=True)
        if ok:
            listed.append(rel)
    (out / "files.json").write_text(json.dumps(listed, indent=1))
    return 0


def run_file(path: Path, rel: str, env: dict, timeout: float) -> dict:
    """Run one file as __main__ through `python -m tilelang_core.run`; its row (PASS when it exits 0)."""
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-m", "tilelang_core.run", str(path)], cwd=path.parent, env=env,
                           timeout=timeout, capture_output=True, text=True)
        status = "PASS" if p.returncode == 0 else "FAIL"
        tail = (p.stdout + p.stderr).strip().splitlines()[-3:]
    except subprocess.TimeoutExpired:
        status, tail = "TIMEOUT", []
    row = {"file": rel, "status": status, "seconds": round(time.perf_counter() - t0, 1), "tail": tail}
    print(f"{status:7} {row['seconds']:6.1f}s {rel}", flush=True)
    if status != "PASS":  # the cause on the line, so a run cut short by its bound still says why
        print("        " + " / ".join(tail)[:400], flush=True)
    return row


def report_rows(rows: list[dict], report: Path | None) -> int:
    """Write the rows as JSON and print the PASS/FAIL table last; 0 when every file passed."""
    if report is not None:
        report.write_text(json.dumps(rows, indent=1))
    print("\n| file | result | s |\n|---|---|---|")
    for r in rows:
        print(f"| {r['file']} | {r['status']} | {r['seconds']} |")
        if r["status"] != "PASS":
            print("|   | " + " / ".join(r["tail"])[:300] + " | |")
    passed = sum(r["status"] == "PASS" for r in rows)
    print(f"\n{passed}/{len(rows)} files passed their own checks on the GPU")
    return 0 if passed == len(rows) else 1


def run(out: Path, timeout: float, report: Path | None) -> int:
    """Run every prepared file on the GPU; prints a PASS/FAIL table last."""
    files = json.loads((out / "files.json").read_text())
    env = dict(os.environ, TILELSP_CACHE_DIR=str((out / "cache").resolve()), TILELANG_CORE_ALIAS="force",
               PYTHONPATH=str((out / "pkg").resolve()), PYTHONUNBUFFERED="1")
    return report_rows([run_file((out / "examples" / rel).resolve(), rel, env, timeout) for rel in files], report)


def run_jit(examples: Path, files: list[str], jobs: int, timeout: float, report: Path | None) -> int:
    """On a GPU machine that has apache-tvm too: each file lowers, compiles and runs there, `jobs` at a time."""
    from concurrent.futures import ThreadPoolExecutor

    path = os.pathsep.join([str(ROOT)] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p])
    env = dict(os.environ, TILELANG_CORE_ALIAS="force", PYTHONPATH=path, PYTHONUNBUFFERED="1")
    with ThreadPoolExecutor(jobs) as pool:
        rows = list(pool.map(lambda rel: run_file((examples / rel).resolve(), rel, env, timeout), files))
    return report_rows(rows, report)


def main() -> int:
    """Parse the subcommand."""
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("prepare")
    pp.add_argument("examples")
    pp.add_argument("files", nargs="+")
    pp.add_argument("--build-only", action="store_true",
                    help="build the artifacts without running the kernels on the CPU (checks pass unexamined)")
    pr = sub.add_parser("run")
    for p in (pp, pr):
        p.add_argument("--dir", default=str(ROOT / ".gpu_corpus"))
        p.add_argument("--timeout", type=float, default=300.0)
    pr.add_argument("--report", default=None)
    pj = sub.add_parser("jit", help="on a GPU machine with apache-tvm: lower, compile and run each file there")
    pj.add_argument("examples")
    pj.add_argument("files", nargs="+")
    pj.add_argument("--jobs", type=int, default=8)
    pj.add_argument("--timeout", type=float, default=300.0)
    pj.add_argument("--report", default=None)
    args = ap.parse_args()
    if args.cmd == "jit":
        return run_jit(Path(args.examples).resolve(), args.files, args.jobs, args.timeout,
                       Path(args.report) if args.report else None)
    out = Path(args.dir).resolve()  # the build children run in each file's folder: a relative cache would land there
    if args.cmd == "prepare":
        return prepare(Path(args.examples), args.files, out, args.timeout, args.build_only)
    return run(out, args.timeout, Path(args.report) if args.report else None)


if __name__ == "__main__":
    sys.exit(main())
