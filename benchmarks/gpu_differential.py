"""Differential testing on a real GPU: random valid TileLang kernels (tests/differential/kernelgen.py) built here as
sm_90a artifacts, launched on the GPU and compared with the CPU backend's outputs of the same kernel.

Here (tvm, nvcc, no GPU):
    python benchmarks/gpu_differential.py build --count 220 --seed 1 --dir .gpu_differential
    python benchmarks/gpu_differential.py build --revert-atomic-fix --count 60 --dir .gpu_differential_reverted
  `build` generates the kernels, builds each artifact (2 processes), runs it on the CPU backend on seeded inputs and
  saves artifact + inputs + CPU outputs (torch.save) into DIR. `--revert-atomic-fix` builds only the colsum family
  (T.atomic_* in a T.Parallel over a reduced, replicated fragment) from a temporary git worktree of HEAD whose CUDA
  lowering has the one-thread-per-iteration guard of e37497a removed: on the GPU those kernels must mismatch
  (atomic_add: each column gets threads x its sum).
There (GPU, torch, cuda-bindings, no tvm; carry DIR):
    python benchmarks/gpu_differential.py run --dir .gpu_differential
  launches every saved artifact (loaded from DIR, never from the artifact cache) on the saved inputs with its
  outputs poisoned (NaN / a sentinel; atomic outputs keep their start value), prints PASS/FAIL per family and the
  failures, writes $OUT/gpu_differential.json. Exit 1 on any mismatch.
"""
from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ATOMIC = ("atomic", "colsum")          # outputs accumulate into their start value
REVERT_AT = str(Path(tempfile.gettempdir()) / "tilelsp-revert-atomic-fix")  # a temporary worktree of HEAD
# the lowering of e37497a (as on main now) that makes an atomic in a replicated T.Parallel run on one thread
REVERT = [('old, self.parallel_scope.owner = self.parallel_scope.owner, f"T.floormod({flat}, {self.threads}) == tx"',
           "old = self.parallel_scope.owner"),
          ('                self.parallel_scope.owner = lay.one_copy("tx")\n', "                pass\n")]


# --- build (here) -------------------------------------------------------------------------------------------


def programs(count: int, seed: int, families: tuple | None) -> list:
    """`count` random programs (only `families` when given), reproducible from `seed`."""
    sys.path.insert(0, str(ROOT / "tests" / "differential"))
    from kernelgen import random_program

    rng, out = random.Random(seed), []
    while len(out) < count:
        p = random_program(rng)
        if families is None or p.family in families:
            out.append(p)
    return out


def _init(root: str) -> None:
    sys.path.insert(0, root)
    sys.path.insert(1, str(ROOT / "tests" / "differential"))
    import tilelang_core

    assert Path(tilelang_core.__file__).resolve().is_relative_to(Path(root).resolve()), tilelang_core.__file__


def build_one(job: tuple) -> dict:
    """Build one program's artifact, run it on the CPU backend, save both; a record for the manifest."""
    import torch

    from kernelgen import inputs, reference, source
    from tilelang_core.check import check_source
    from tilelang_core.codegen import cpu
    from tilelang_core.runtime.artifact import build_artifact

    index, p, out = job
    rec = {"index": index, "family": p.family, "program": dataclasses.asdict(p)}
    t0 = time.perf_counter()
    try:
        res = check_source(source(p), f"gen{index:04d}.py")
        if res.errors:
            d = res.errors[0]
            raise RuntimeError(f"{d.code} line {d.span.line}: {d.message}")
        func = res.kernels[0]
        art = build_artifact(func, "sm_90a", cache=False)
        args = inputs(p)
        outs = sorted(reference(p, [a.clone() for a in args]))
        ran = [a.clone() for a in args]
        cpu.build(func)(*ran)
        torch.save({"inputs": args, "outputs": outs, "cpu": {i: ran[i] for i in outs}}, out / f"{index:04d}.pt")
        rec.update(meta=art.save(out / "art").name, data=f"{index:04d}.pt")
    except Exception as exc:  # noqa: BLE001 - recorded with its diagnostic, counted as a build failure
        rec["error"] = f"{type(exc).__name__}: {exc}"[-600:]
    rec["seconds"] = round(time.perf_counter() - t0, 2)
    return rec


def revert_worktree() -> Path:
    """A detached worktree of HEAD at REVERT_AT with the atomic guard's lowering removed."""
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", REVERT_AT, "HEAD"], check=True,
                   capture_output=True)
    path = Path(REVERT_AT) / "tilelang_core" / "codegen" / "cuda" / "parallel.py"
    text = path.read_text()
    for old, new in REVERT:
        if text.count(old) != 1:
            raise SystemExit(f"cannot revert the atomic guard: {old!r} is not in {path} once")
        text = text.replace(old, new)
    path.write_text(text)
    return Path(REVERT_AT)


def build(count: int, seed: int, out: Path, revert: bool, jobs: int) -> int:
    """Generate, build and save `count` kernels into `out`; print progress and the build failures."""
    import multiprocessing

    t0 = time.perf_counter()
    out.mkdir(parents=True, exist_ok=True)
    todo = [(k, p, out) for k, p in enumerate(programs(count, seed, ("colsum",) if revert else None))]
    root = revert_worktree() if revert else ROOT
    records = []
    try:
        with multiprocessing.get_context("fork").Pool(jobs, initializer=_init, initargs=(str(root),)) as pool:
            for rec in pool.imap_unordered(build_one, todo):
                records.append(rec)
                if "error" in rec:
                    print(f"BUILD FAIL {rec['index']:4} {rec['family']}: {rec['error'][:300]}", flush=True)
                if len(records) % 10 == 0 or len(records) == len(todo):
                    print(f"  {len(records)}/{len(todo)} built, {time.perf_counter() - t0:.0f} s", flush=True)
    finally:
        if revert:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", REVERT_AT], check=False)
            subprocess.run(["git", "-C", str(ROOT), "worktree", "prune"], check=False)
    records.sort(key=lambda r: r["index"])
    head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    failures = [r for r in records if "error" in r]
    (out / "manifest.json").write_text(json.dumps(
        {"arch": "sm_90a", "commit": head, "seed": seed, "reverted_atomic_fix": revert,
         "seconds": round(time.perf_counter() - t0, 1), "items": [r for r in records if "error" not in r],
         "failures": failures}, indent=1))
    families = collections.Counter(r["family"] for r in records if "error" not in r)
    print(f"built {len(records) - len(failures)} kernels {dict(families)} into {out} in "
          f"{time.perf_counter() - t0:.0f} s; {len(failures)} build failures")
    return 0


# --- run (on the GPU) ---------------------------------------------------------------------------------------


def family_key(program: dict) -> str:
    """The table row of a program: its family (with the atomic op for the atomic families)."""
    return f"{program['family']}/{program['atomic']}" if program["family"] in ATOMIC else program["family"]


def poison(t, family: str):
    """A copy of output `t` to launch into: NaN (floats) or a sentinel (ints); atomic outputs keep their start."""
    import torch

    if family in ATOMIC:
        return t.clone()
    return torch.full_like(t, float("nan")) if t.is_floating_point() else torch.full_like(t, -123456789)


def compare(program: dict, got, want) -> str | None:
    """None when the GPU output `got` matches the CPU output `want` within the dtypes' tolerance; else why not."""
    import torch

    fam, ulp = program["family"], {"float16": 2.0 ** -9, "bfloat16": 2.0 ** -6}.get(str(want.dtype)[6:], 0.0)
    g, w = got.double().cpu(), want.double()
    if not want.is_floating_point():
        bad = int((g != w).sum())
        return f"{bad} of {w.numel()} ints differ (e.g. got {g[g != w][:3].tolist()}, want {w[g != w][:3].tolist()})" \
            if bad else None
    both = (torch.isnan(g) & torch.isnan(w)) | (g == w)
    if fam == "gemm":  # K-long fp32 accumulations (tf32 mma for fp32 inputs): relative to the norm
        rel = 5e-3 if program["dtype"] == "float32" else 1e-4
        d = torch.where(both, 0.0, g - w)
        norm = float(torch.linalg.vector_norm(d)) / max(float(torch.linalg.vector_norm(w.nan_to_num())), 1e-6)
        if not norm <= rel + ulp:
            return f"relative norm error {norm:.3g} > {rel + ulp:.3g}"
        return None
    scale = max(float(w.nan_to_num(0, 0, 0).abs().max()) if w.numel() else 1.0, 1.0)
    depth = max(program["M"], program["N"]) ** 0.5
    tol = (ulp + 1e-5 * depth) * w.abs().nan_to_num(0, 0, 0) + 1e-5 * depth * scale
    bad = ~both & ~((g - w).abs() <= tol)
    if not bad.any():
        return None
    first = bad.nonzero()[0].tolist()
    ratio = (g[bad] / w[bad]).median().item()
    return (f"{int(bad.sum())} of {w.numel()} elements differ (max error {float((g - w)[bad].abs().max()):.3g}, "
            f"first at {first}: got {g[tuple(first)].item():.6g}, want {w[tuple(first)].item():.6g}; "
            f"median got/want {ratio:.4g})")


def run(folder: Path, out: Path) -> int:
    """Launch every saved kernel on this GPU, compare with the CPU outputs; table, failures, JSON report."""
    import torch

    sys.path.insert(0, str(ROOT))  # the GPU machine has this tree, not an installed tilelang_core
    from tilelang_core.runtime.artifact import Artifact
    from tilelang_core.runtime.launch import launch

    manifest = json.loads((folder / "manifest.json").read_text())
    print("device:", torch.cuda.get_device_name(), "torch", torch.__version__, "| built at", manifest["commit"][:10],
          "| reverted atomic fix" if manifest["reverted_atomic_fix"] else "", flush=True)
    table, rows = collections.defaultdict(collections.Counter), []
    for item in manifest["items"]:
        prog, key = item["program"], family_key(item["program"])
        try:
            data = torch.load(folder / item["data"])
            art = Artifact.load(folder / "art" / item["meta"])
            args = [a.cuda() for a in data["inputs"]]
            for i in data["outputs"]:
                args[i] = poison(args[i], prog["family"]).cuda()
            launch(art, args)
            torch.cuda.synchronize()
            problems = [f"arg {i}: {e}" for i in data["outputs"] if (e := compare(prog, args[i], data["cpu"][i]))]
            status = "FAIL" if problems else "PASS"
        except Exception as exc:  # noqa: BLE001 - one kernel's crash is its row
            status, problems = "ERROR", [f"{type(exc).__name__}: {exc}"[:400]]
        table[key][status] += 1
        if problems:
            rows.append({"index": item["index"], "family": key, "status": status, "problems": problems,
                         "program": prog})
            print(f"{status} #{item['index']} {key} M={prog['M']} N={prog['N']} K={prog['K']} bm={prog['bm']} "
                  f"bn={prog['bn']} {prog['dtype']}->{prog['out_dtype']} threads={prog['threads']}: "
                  f"{'; '.join(problems)[:300]}", flush=True)
    print("\n| family | PASS | FAIL | ERROR |\n|---|---|---|---|")
    for key in sorted(table):
        print(f"| {key} | {table[key]['PASS']} | {table[key]['FAIL']} | {table[key]['ERROR']} |")
    total = sum(sum(c.values()) for c in table.values())
    print(f"\n{total - len(rows)}/{total} kernels match the CPU backend; {len(rows)} mismatches/errors; "
          f"{len(manifest['failures'])} kernels did not build here")
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_differential.json").write_text(json.dumps(
        {"device": torch.cuda.get_device_name(), "built_at": manifest["commit"],
         "reverted_atomic_fix": manifest["reverted_atomic_fix"], "kernels": total,
         "table": {k: dict(v) for k, v in table.items()}, "failures": rows,
         "build_failures": manifest["failures"]}, indent=1))
    return 1 if rows else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="generate, build and run on the CPU backend here (needs tvm and nvcc)")
    b.add_argument("--count", type=int, default=220)
    b.add_argument("--seed", type=int, default=1)
    b.add_argument("--dir", default=None, help="default .gpu_differential (.gpu_differential_reverted)")
    b.add_argument("--revert-atomic-fix", action="store_true", help="colsum kernels from HEAD without the fix")
    b.add_argument("--jobs", type=int, default=2)
    r = sub.add_parser("run", help="launch the saved kernels on this machine's GPU (needs torch, cuda-bindings)")
    r.add_argument("--dir", default=str(ROOT / ".gpu_differential"))
    r.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args(argv)
    if args.cmd == "build":
        folder = args.dir or str(ROOT / (".gpu_differential_reverted" if args.revert_atomic_fix else ".gpu_differential"))
        return build(args.count, args.seed, Path(folder), args.revert_atomic_fix, args.jobs)
    return run(Path(args.dir), Path(args.out))


if __name__ == "__main__":
    sys.exit(main())
