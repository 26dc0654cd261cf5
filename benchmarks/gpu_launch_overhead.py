"""Host time of one launch through our tvm-free launcher beside torch.matmul's, on the GPU machine (issue 11).

`python benchmarks/gpu_launch_overhead.py --art .gpu_X [--meta NAME ...] [--calls 300] [--profile]` launches each
chosen GEMM artifact (built by `gpu_hopper.py build`) `calls` times back to back on the same tensors and reports the
host microseconds per call (the kernels queue behind each other on the GPU; the host never waits for them while the
driver's launch queue has room: 1000 calls of a 0.2 ms kernel filled it for torch.matmul, which then measured the
GPU's pace, 96 us) beside torch.matmul on the same operands; `--profile` prints cProfile's top entries for our
launches. Writes launch_overhead.json into $OUT.
"""
from __future__ import annotations

import argparse
import cProfile
import io
import json
import os
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def host_us(fn, calls: int) -> float:
    """Mean host microseconds per call of `fn` over `calls` calls (after a warm-up), the GPU left to catch up."""
    import torch

    for _ in range(5):
        fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    us = (time.perf_counter() - t0) / calls * 1e6
    torch.cuda.synchronize()
    return us


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--art", required=True)
    ap.add_argument("--meta", nargs="*", default=())
    ap.add_argument("--calls", type=int, default=300)
    ap.add_argument("--profile", action="store_true")
    args = ap.parse_args(argv)

    import torch

    from tilelang_core.runtime.artifact import Artifact
    from tilelang_core.runtime.launch import launch

    art_dir = Path(args.art)
    rows = []
    for item in json.loads((art_dir / "manifest.json").read_text()):
        if item["role"] != "gemm" or args.meta and not any(m in item["meta"] for m in args.meta):
            continue
        dt = getattr(torch, item["dtype"])
        a, b = (torch.randn(item["M"], item["M"], device="cuda", dtype=dt) for _ in range(2))
        c = torch.empty_like(a)
        art = Artifact.load(art_dir / item["meta"])
        ours = host_us(lambda: launch(art, [a, b, c]), args.calls)
        torch_us = host_us(lambda: torch.matmul(a, b, out=c), args.calls)
        rows.append(dict(meta=item["meta"], tile=item["tile"], M=item["M"], dtype=item["dtype"], ours_us=ours,
                         torch_us=torch_us))
        print(f"{item['dtype']:8s} {item['M']:5d} {item['tile']:22s} ours {ours:7.1f} us/launch  "
              f"torch.matmul {torch_us:6.1f} us", flush=True)
        if args.profile:
            prof = cProfile.Profile()
            prof.enable()
            for _ in range(args.calls):
                launch(art, [a, b, c])
            prof.disable()
            torch.cuda.synchronize()
            out = io.StringIO()
            pstats.Stats(prof, stream=out).sort_stats("tottime").print_stats(18)
            print(out.getvalue()[-4000:], flush=True)
    (Path(os.environ.get("OUT", ".")) / "launch_overhead.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
