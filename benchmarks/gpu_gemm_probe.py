"""Why a GEMM is as fast as it is, on the H200 (issue 11): which cuBLAS kernel torch picks, and the SM clock and
board power while ours and cuBLAS's run back to back for a few seconds each.

On the GPU machine (torch, cuda-python, nvidia-smi; no tvm), over artifacts built by `gpu_hopper.py build`:
`python benchmarks/gpu_gemm_probe.py --art .gpu_X [--meta NAME ...] [--seconds 3]` prints, per (dtype, size),
cuBLAS's kernel name, grid and block from torch.profiler, then one line per sustained run: mean SM clock (MHz),
board power (W), temperature and the kernel's mean time over the run. A kernel at the board's power limit runs
at a lower clock; two kernels at the same clock differ in work per cycle. Writes gemm_probe.json into $OUT.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SMI_FIELDS = "clocks.sm,power.draw,temperature.gpu"


def cublas_kernels(dtype, size: int) -> list:
    """(name, grid, block) of every GPU kernel one torch.matmul of two size x size `dtype` matrices launches."""
    import tempfile

    import torch
    from torch.profiler import ProfilerActivity, profile

    a = torch.randn(size, size, device="cuda", dtype=dtype)
    b = torch.randn(size, size, device="cuda", dtype=dtype)
    torch.matmul(a, b)
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        torch.matmul(a, b)
        torch.cuda.synchronize()
    with tempfile.NamedTemporaryFile(suffix=".json") as f:
        prof.export_chrome_trace(f.name)
        trace = json.loads(Path(f.name).read_text())
    return [(e["name"], e.get("args", {}).get("grid"), e.get("args", {}).get("block"))
            for e in trace.get("traceEvents", []) if e.get("cat") == "kernel"]


def sustained(fn, seconds: float) -> dict:
    """Run `fn` back to back for `seconds` while nvidia-smi samples the board every 50 ms; the samples' means."""
    import torch

    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    smi = subprocess.Popen(["nvidia-smi", f"--query-gpu={SMI_FIELDS}", "--format=csv,noheader,nounits", "-lms", "50"],
                           stdout=subprocess.PIPE, text=True)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    calls, t0 = 0, time.perf_counter()
    start.record()
    while time.perf_counter() - t0 < seconds:
        for _ in range(20):
            fn()
        calls += 20
        torch.cuda.synchronize()
    end.record()
    torch.cuda.synchronize()
    smi.terminate()
    samples = [list(map(float, line.split(","))) for line in smi.communicate()[0].splitlines()
               if line.count(",") == 2 and "N/A" not in line]
    samples = samples[len(samples) // 5:]  # the first fifth: the clock still settling
    mean = [sum(col) / len(col) for col in zip(*samples)] if samples else [None] * 3
    return dict(clock_mhz=mean[0], power_w=mean[1], temp_c=mean[2], samples=len(samples),
                ms=start.elapsed_time(end) / calls)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--art", required=True, help="artifact folder with manifest.json (gpu_hopper.py build)")
    ap.add_argument("--meta", nargs="*", default=(), help="only artifacts whose meta file name contains these")
    ap.add_argument("--seconds", type=float, default=3.0)
    args = ap.parse_args(argv)

    import torch

    from tilelang_core.runtime.artifact import Artifact
    from tilelang_core.runtime.launch import launch

    art_dir = Path(args.art)
    manifest = [i for i in json.loads((art_dir / "manifest.json").read_text())
                if i["role"] == "gemm" and (not args.meta or any(m in i["meta"] for m in args.meta))]
    report = {"device": torch.cuda.get_device_name(), "cublas": [], "runs": []}
    for dt, size in sorted({(i["dtype"], i["M"]) for i in manifest}):
        for name, grid, block in cublas_kernels(getattr(torch, dt), size):
            report["cublas"].append(dict(dtype=dt, size=size, name=name, grid=grid, block=block))
            print(f"cuBLAS {dt:8s} {size:5d} grid={grid} block={block} {name}", flush=True)
    for item in manifest:
        dt, size = getattr(torch, item["dtype"]), item["M"]
        a, b = (torch.randn(size, size, device="cuda", dtype=dt) for _ in range(2))
        c = torch.empty(size, size, device="cuda", dtype=dt)
        art = Artifact.load(art_dir / item["meta"])
        for who, fn in (("ours", lambda: launch(art, [a, b, c])), ("cuBLAS", lambda: torch.matmul(a, b, out=c))):
            row = dict(who=who, dtype=item["dtype"], size=size, path=item["path"], tile=item["tile"],
                       meta=item["meta"], **sustained(fn, args.seconds))
            report["runs"].append(row)
            tflops = 2 * size ** 3 / row["ms"] / 1e9
            print(f"{who:6s} {item['dtype']:8s} {size:5d} {item['path']:6s} {item['tile']:20s} "
                  f"{row['ms']:.4f} ms {tflops:6.1f} TFLOP/s  clock {row['clock_mhz']} MHz  power {row['power_w']} W  "
                  f"temp {row['temp_c']} C  ({row['samples']} samples)", flush=True)
    (Path(os.environ.get("OUT", ".")) / "gemm_probe.json").write_text(json.dumps(report, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
