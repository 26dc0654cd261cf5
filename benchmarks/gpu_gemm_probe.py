"""Why a GEMM is as fast as it is, on the H200 (issue 11): which cuBLAS kernel torch picks, and the SM clock and
board power while ours and cuBLAS's run back to back for a few seconds each.

On the GPU machine (torch, cuda-python, nvidia-smi; no tvm), over artifacts built by `gpu_hopper.py build`:
`python benchmarks/gpu_gemm_probe.py --art .gpu_X [--meta NAME ...] [--seconds 3]` prints, per (dtype, size),
cuBLAS's kernel name, grid and block from torch.profiler, then one line per sustained run: mean SM clock (MHz),
board power (W), temperature and the kernel's mean time over the run. A kernel at the board's power limit runs
at a lower clock; two kernels at the same clock differ in work per cycle. Writes gemm_probe.json into $OUT.
`--ncu` instead profiles one launch of each chosen artifact and of cuBLAS on the same operands under Nsight Compute
(its base clock, caches flushed): time, cycles, DRAM and L2 traffic, tensor-pipe use, instructions issued.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SMI_FIELDS = "clocks.sm,power.draw,temperature.gpu"
NCU_METRICS = ("gpu__time_duration.sum", "sm__cycles_elapsed.max", "dram__bytes_read.sum", "dram__bytes_write.sum",
               "lts__t_bytes.sum", "lts__t_sector_hit_rate.pct",
               "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed", "smsp__inst_executed.sum")


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
    start.record()
    for _ in range(10):
        fn()
    end.record()
    torch.cuda.synchronize()
    calls = max(10, int(seconds * 1e3 / start.elapsed_time(end) * 10))
    start.record()
    for _ in range(calls):  # one synchronisation at the end: the GPU never waits for the host between launches
        fn()
    end.record()
    torch.cuda.synchronize()
    smi.terminate()
    samples = [list(map(float, line.split(","))) for line in smi.communicate()[0].splitlines()
               if line.count(",") == 2 and "N/A" not in line]
    samples = samples[len(samples) // 5:]  # the first fifth: the clock still settling
    mean = [sum(col) / len(col) for col in zip(*samples)] if samples else [None] * 3
    return dict(clock_mhz=mean[0], power_w=mean[1], temp_c=mean[2], samples=len(samples),
                ms=start.elapsed_time(end) / calls)


def ncu_profile(meta: str, art_dir: Path) -> list:
    """Nsight Compute's NCU_METRICS for the last launch of ours and of cuBLAS in a child run of `--ncu-child`."""
    import csv
    import io

    cmd = ["ncu", "--csv", "--metrics", ",".join(NCU_METRICS), "-k", "regex:gemm_kernel|nvjet|sm90_xmma",
           sys.executable, __file__, "--art", str(art_dir), "--ncu-child", meta]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    rows = list(csv.DictReader(io.StringIO(out.stdout[out.stdout.find('"ID"'):])))
    last = {}
    for r in rows:  # one row per (launch, metric); keep each kernel's last launch
        key = "ours" if "gemm_kernel" in r["Kernel Name"] else "cuBLAS"
        if last.get(key, {}).get("id") != r["ID"]:
            last[key] = {"id": r["ID"], "kernel": r["Kernel Name"][:60]}
        last[key][r["Metric Name"]] = float(r["Metric Value"].replace(",", "") or "nan")
    if not last:
        print(out.stdout[-2000:], out.stderr[-2000:], flush=True)
    return [dict(who=k, meta=meta, **v) for k, v in last.items()]


def _ncu_child(art_dir: Path, meta: str) -> None:
    """Two launches of artifact `meta` and two cuBLAS products of the same operands (profiled by the parent)."""
    import torch

    from tilelang_core.runtime.artifact import Artifact
    from tilelang_core.runtime.launch import launch

    item = next(i for i in json.loads((art_dir / "manifest.json").read_text()) if i["meta"] == meta)
    dt, size = getattr(torch, item["dtype"]), item["M"]
    a, b = (torch.randn(size, size, device="cuda", dtype=dt) for _ in range(2))
    c = torch.empty(size, size, device="cuda", dtype=dt)
    art = Artifact.load(art_dir / meta)
    for _ in range(2):
        launch(art, [a, b, c])
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--art", required=True, help="artifact folder with manifest.json (gpu_hopper.py build)")
    ap.add_argument("--meta", nargs="*", default=(), help="only artifacts whose meta file name contains these")
    ap.add_argument("--seconds", type=float, default=3.0)
    ap.add_argument("--ncu", action="store_true", help="profile one launch of each under Nsight Compute instead")
    ap.add_argument("--ncu-child", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.ncu_child:
        _ncu_child(Path(args.art), args.ncu_child)
        return 0

    import torch

    from tilelang_core.runtime.artifact import Artifact
    from tilelang_core.runtime.launch import launch

    art_dir = Path(args.art)
    manifest = [i for i in json.loads((art_dir / "manifest.json").read_text())
                if i["role"] == "gemm" and (not args.meta or any(m in i["meta"] for m in args.meta))]
    report = {"device": torch.cuda.get_device_name(), "cublas": [], "runs": []}
    if args.ncu:
        for item in manifest:
            for row in ncu_profile(item["meta"], art_dir):
                report["runs"].append(dict(row, tile=item["tile"], path=item["path"], dtype=item["dtype"]))
                print(f"{row['who']:6s} {item['dtype']:8s} {item['M']:5d} {item['path']:8s} {item['tile']:20s} "
                      + " ".join(f"{m.split('.')[0].split('__')[-1]}={row.get(m, float('nan')):.4g}"
                                 for m in NCU_METRICS), flush=True)
        (Path(os.environ.get("OUT", ".")) / "gemm_ncu.json").write_text(json.dumps(report, indent=1))
        return 0
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
