"""H200 check of warp-specialised roles and grid barriers: the kernels of tests/codegen/role_kernels.py (tile ops
inside `if tx < 128:` roles, named barriers, hand-written cp.async with mbarrier arrivals, T.sync_grid launched
cooperatively) against their torch references.

Here (nvcc + tvm): `python benchmarks/gpu_roles.py build [--out .artifacts/roles]`;
on the GPU machine: `python3 benchmarks/gpu_roles.py run [--art .artifacts/roles]` (one line per kernel).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "codegen")]
KERNELS = ("ROLE_GEMMS", "ROLE_SYNC", "CP_ASYNC", "GRID_SYNC")


def build(out: Path) -> None:
    """Lower and compile every kernel for sm_90a into `out` with a manifest."""
    import role_kernels
    from tilelang_core import check_source
    from tilelang_core.runtime.artifact import build_artifact

    items = []
    for name in KERNELS:
        kernel = check_source(getattr(role_kernels, name), f"<{name}>").kernels[0]
        meta = build_artifact(kernel, "sm_90a", cache=False).save(out)
        items.append({"meta": meta.name, "ref": f"ref_{kernel.name}"})
    (out / "manifest.json").write_text(json.dumps(items, indent=1))
    print(f"built {len(items)} kernels into {out}")


def run(art: Path) -> int:
    """Launch each kernel on random inputs (poisoned outputs) and compare every tensor with the reference's."""
    import torch

    import role_kernels
    from tilelang_core.runtime.artifact import Artifact
    from tilelang_core.runtime.launch import launch

    failures = 0
    for item in json.loads((art / "manifest.json").read_text()):
        a = Artifact.load(art / item["meta"])
        torch.manual_seed(0)
        args = [torch.randn(p["shape"], device="cuda").to(getattr(torch, p["dtype"])) for p in a.params]
        expected = [t.clone() for t in args]
        getattr(role_kernels, item["ref"])(*expected)
        launch(a, args)
        torch.cuda.synchronize()
        errs = [float((x.float() - y.float()).abs().max()) for x, y in zip(args, expected)]
        ok = all(e <= 1e-2 * (1 + float(y.float().abs().max())) for e, y in zip(errs, expected))
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {a.name:14s} cooperative={a.cooperative!s:5s} max abs error per tensor "
              f"{['%.3g' % e for e in errs]}", flush=True)
    return 1 if failures else 0


def main(argv=None) -> int:
    """Build here or run on the GPU machine."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("mode", choices=("build", "run"))
    ap.add_argument("--out", default=".artifacts/roles")
    ap.add_argument("--art", default=".artifacts/roles")
    args = ap.parse_args(argv)
    if args.mode == "build":
        build(ROOT / args.out)
        return 0
    return run(ROOT / args.art)


if __name__ == "__main__":
    sys.exit(main())
