"""H200 check of the thread-level CUDA constructs (thread indices, mbarriers, T.ws roles, reducers, cumsum,
vector atomics, IEEE intrinsics): the kernels of tests/codegen/thread_kernels.py against their torch references.

Here (nvcc + tvm): `python benchmarks/gpu_threads.py build [--out .artifacts/threads]`;
on the GPU machine: `python3 benchmarks/gpu_threads.py run [--art .artifacts/threads]` (one line per kernel).
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "codegen")]
KERNELS = ("REVERSE", "HANDOFF", "REDUCERS", "SCANS", "HISTOGRAM", "TRANSPOSE", "WS_GEMM", "GEMV_REDUCER", "SHUFFLES", "PRINTS")


def build(out: Path) -> None:
    """Lower and compile every kernel for sm_90a into `out` with a manifest."""
    import thread_kernels
    from tilelang_core import check_source
    from tilelang_core.runtime.artifact import build_artifact

    items = []
    for name in KERNELS:
        res = check_source(getattr(thread_kernels, name), f"<{name}>")
        kernel = res.kernels[0]
        meta = build_artifact(kernel, "sm_90a", cache=False).save(out)
        items.append({"meta": meta.name, "ref": f"ref_{kernel.name}"})
    (out / "manifest.json").write_text(json.dumps(items, indent=1))
    print(f"built {len(items)} kernels into {out}")


def run(art: Path) -> int:
    """Launch each kernel on random inputs and compare every tensor with the reference's."""
    import torch

    import thread_kernels
    from tilelang_core.runtime.artifact import Artifact
    from tilelang_core.runtime.launch import launch

    failures = 0
    for item in json.loads((art / "manifest.json").read_text()):
        a = Artifact.load(art / item["meta"])
        torch.manual_seed(0)
        args = []
        for p in a.params:
            dtype = getattr(torch, p["dtype"])
            shape = p["shape"]
            args.append(torch.randn(shape, dtype=dtype, device="cuda") if dtype.is_floating_point
                        else torch.randint(0, 64, shape, dtype=dtype, device="cuda"))
        expected = [t.clone() for t in args]
        getattr(thread_kernels, item["ref"])(*expected)
        launch(a, args)
        torch.cuda.synchronize()
        errs = [float((x.float() - y.float()).abs().max()) for x, y in zip(args, expected)]
        ok = all(e <= 1e-2 * (1 + float(y.float().abs().max())) for e, y in zip(errs, expected))
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {a.name:10s} max abs error per tensor {['%.3g' % e for e in errs]}",
              flush=True)
    return 1 if failures else 0


def main(argv=None) -> int:
    """Build here or run on the GPU machine."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("mode", choices=("build", "run"))
    ap.add_argument("--out", default=".artifacts/threads")
    ap.add_argument("--art", default=".artifacts/threads")
    args = ap.parse_args(argv)
    if args.mode == "build":
        build(ROOT / args.out)
        return 0
    return run(ROOT / args.art)


if __name__ == "__main__":
    sys.exit(main())
