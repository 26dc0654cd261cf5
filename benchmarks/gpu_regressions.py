"""The fuzzer-pattern cases (tests/fuzzer_patterns) on a real GPU: the colsum atomic that ran on every thread of an
H200, ceildiv/clamp/fp8 casts, 8/16-bit atomics, fp8 reductions, and T.rng_* (fuzz_rng: the GPU's Philox draws must equal
the pure-Python stream the CPU backend is tested against, bit for bit). Prints a PASS/FAIL table.

Here (tvm + nvcc, no GPU): `python benchmarks/gpu_regressions.py build [--arch sm_90a] [--out .gpu_regressions]`.
On the GPU machine (torch + cuda-python, no tvm; carry the ignored `.gpu_regressions` folder):
`python benchmarks/gpu_regressions.py run [--art .gpu_regressions]`. Expected: every row PASS, XFAIL for the
case the table marks as a known wrong answer (x * 0 folding).
The run imports only the case tables (inputs and torch references) and the artifact launcher.
"""
from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "fuzzer_patterns")]
THEMES = ("fuzz_atomics", "fuzz_arith", "fuzz_fp8", "fuzz_values", "fuzz_control", "fuzz_gemm", "fuzz_layouts",
          "fuzz_rng")


def cases():
    """(theme, index, Case) for every case that lowers for CUDA."""
    for theme in THEMES:
        for k, case in enumerate(importlib.import_module(theme).CASES):
            if case.cuda:
                yield theme, k, case


def build(arch: str, out: Path) -> int:
    """Lower and compile every case for `arch`; write the artifacts and a manifest into `out`."""
    from fuzz_harness import kernel_ir

    from tilelang_core.runtime.artifact import build_artifact

    items, failures = [], []
    for theme, k, case in cases():
        try:
            art = build_artifact(kernel_ir(case), arch, cache=False)
            items.append({"theme": theme, "index": k, "name": case.name, "meta": art.save(out).name})
        except Exception as exc:  # noqa: BLE001 - report and go on
            failures.append({"theme": theme, "name": case.name, "error": str(exc)[-600:]})
    out.mkdir(parents=True, exist_ok=True)
    (out / "manifest.json").write_text(json.dumps({"arch": arch, "items": items, "failures": failures}, indent=1))
    print(f"built {len(items)} artifacts into {out}; {len(failures)} failures")
    for f in failures:
        print("BUILD FAIL", f["name"], f["error"])
    return 1 if failures else 0


def run_one(case, art, launch) -> tuple[str, str]:
    """Launch one case three times on fresh inputs (a changing answer is a race); (status, detail)."""
    import torch

    from fuzz_harness import compare

    for _ in range(3):
        args = case.inputs("cuda")
        launch(art, args)
        torch.cuda.synchronize()
        err = compare(case, args)
        if err:
            return ("XFAIL" if expected_failure(case) else "FAIL"), err
    return ("XPASS" if expected_failure(case) else "PASS"), ""


def expected_failure(case) -> bool:
    """True when the case is known to be wrong on the GPU too."""
    return bool(case.xfail) and "cuda" in case.xfail_on


def run(art_dir: Path, out: Path) -> int:
    """Run every built case on this machine's GPU; print the table; write gpu_regressions.json into `out`."""
    import torch

    from tilelang_core.runtime.artifact import Artifact
    from tilelang_core.runtime.launch import launch

    manifest = json.loads((art_dir / "manifest.json").read_text())
    table = {(t, k): c for t, k, c in cases()}
    rows = []
    print("device:", torch.cuda.get_device_name(), "torch", torch.__version__, flush=True)
    for item in manifest["items"]:
        case = table[(item["theme"], item["index"])]
        t0 = time.time()
        try:
            status, detail = run_one(case, Artifact.load(art_dir / item["meta"]), launch)
        except Exception as exc:  # noqa: BLE001
            status, detail = "ERROR", f"{type(exc).__name__}: {exc}"[:300] + " | " + traceback.format_exc()[-300:]
        rows.append({"status": status, "name": case.name, "issue": case.issue, "detail": detail,
                     "secs": round(time.time() - t0, 2)})
        print(f"{status:5} {case.name:70.70} {case.issue}", flush=True)
    print("\n| status | pattern | report | detail |\n|---|---|---|---|")
    for r in rows:
        print(f"| {r['status']} | {r['name']} | {r['issue']} | {r['detail'][:120]} |")
    for f in manifest.get("failures", []):
        print(f"| BUILD FAIL | {f['name']} | | {f['error'][:120]} |")
    bad = [r for r in rows if r["status"] in ("FAIL", "ERROR", "XPASS")]
    print(f"\n{len(rows) - len(bad)}/{len(rows)} as expected")
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_regressions.json").write_text(json.dumps({"device": torch.cuda.get_device_name(), "rows": rows},
                                                         indent=1))
    return 1 if bad else 0


def main(argv=None) -> int:
    import os

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", help="lower and compile the cases here (needs tvm and nvcc)")
    b.add_argument("--arch", default="sm_90a")
    b.add_argument("--out", default=str(ROOT / ".gpu_regressions"))
    r = sub.add_parser("run", help="launch the built cases on this machine's GPU (needs torch, cuda-python)")
    r.add_argument("--art", default=str(ROOT / ".gpu_regressions"))
    r.add_argument("--out", default=os.environ.get("OUT", "."))
    args = ap.parse_args(argv)
    if args.cmd == "build":
        return build(args.arch, Path(args.out))
    return run(Path(args.art), Path(args.out))


if __name__ == "__main__":
    sys.exit(main())
