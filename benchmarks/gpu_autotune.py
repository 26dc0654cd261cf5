"""Autotune examples/gemm.py at 8192^3 on a GPU: does the autotuner pick a config within 3 % of the best found by
measuring every config carefully?

    build (here, nvcc, no GPU):  .venv/bin/python benchmarks/gpu_autotune.py build [--dir .artifacts/gpu_autotune] [--jobs 2]
    run (the GPU machine, torch + cuda-python, no tvm):  python benchmarks/gpu_autotune.py run [--dir .artifacts/gpu_autotune]

`build` makes the gemm_configs of the file's matmul (carver hints; M = N = K = 8192) as sm_90a artifacts, keeps
the first 16 that build (an invalid config is listed with its diagnostic) and writes DIR/manifest.json. `run`
launches each artifact with `runtime.launch` on random fp16 inputs: first the autotuner's own search (every
config timed as `tilelsp autotune` times it: 5 warm-up and 20 timed runs, the three fastest timed again one after
another, the fastest of those is the pick), then a careful measurement (3 interleaved rounds of 25 + 100 runs,
the median per config). It checks the pick's output against torch, prints a table with TFLOP/s, and PASS when
the pick's careful time is within 3 % of the best careful time. JSON goes to $OUT/gpu_autotune.json (or DIR).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

SIZE, WANTED, TOLERANCE = 8192, 16, 0.03


def build(folder: Path, jobs: int) -> int:
    """Build the configs' artifacts into `folder` (needs tvm and nvcc, no GPU)."""
    from tilelang_core.runtime.autotune_file import load_tuning
    from tilelang_core.runtime.autotune_search import Progress, precompile

    path = ROOT / "examples" / "gemm.py"
    tuning = load_tuning(str(path), path.read_text(), "matmul", "sm_90a", count=3 * WANTED,
                         overrides={"M": SIZE, "N": SIZE, "K": SIZE})
    entries, invalid, start = [], [], 0
    while len(entries) < WANTED and start < len(tuning.configs):  # batches until 16 configs built
        batch = tuning.configs[start:start + WANTED - len(entries)]
        failed = precompile(tuning.build, batch, jobs, Progress(len(batch), "nvcc"))
        for index, config in enumerate(batch):
            try:
                if index in failed:
                    raise RuntimeError(failed[index])
                kernel = tuning.build(config)
            except Exception as exc:  # noqa: BLE001 -- an invalid config: listed with its diagnostic
                invalid.append({"config": config, "error": f"{type(exc).__name__}: {exc}"[:500]})
                continue
            entries.append({"config": config, "artifact": kernel._backend.artifact.save(folder).name})
        start += len(batch)
    (folder / "manifest.json").write_text(json.dumps({"size": SIZE, "configs": entries, "invalid": invalid}, indent=1))
    print(f"built {len(entries)} configs into {folder} ({len(invalid)} invalid)")
    for item in invalid:
        print(f"  invalid {item['config']}: {item['error'].splitlines()[0]}")
    return 0 if len(entries) >= WANTED else 1


def _time(run, warmup: int, rep: int) -> float:
    from tilelang_core.runtime.bench import bench

    return bench(run, warmup=warmup, rep=rep, device="cuda")


def run(folder: Path, out: Path) -> int:
    """Time every carried artifact (needs a GPU, torch and cuda-python; no tvm)."""
    import torch

    from tilelang_core.runtime.artifact import Artifact
    from tilelang_core.runtime.launch import launch

    manifest = json.loads((folder / "manifest.json").read_text())
    n = manifest["size"]
    gen = torch.Generator(device="cuda").manual_seed(0)
    a = torch.randn(n, n, device="cuda", dtype=torch.float16, generator=gen)
    b = torch.randn(n, n, device="cuda", dtype=torch.float16, generator=gen)
    c = torch.empty(n, n, device="cuda", dtype=torch.float16)
    items = [(e["config"], Artifact.load(folder / e["artifact"])) for e in manifest["configs"]]
    runs = [lambda art=art: launch(art, [a, b, c]) for _, art in items]
    # the autotuner's search, as tilelsp autotune does it (tilelsp/cluster/autotune_tasks.measure_packed + the final round)
    first = [_time(r, 5, 20) for r in runs]
    finalists = sorted(range(len(runs)), key=lambda k: first[k])[:3]
    again = {k: _time(runs[k], 5, 20) for k in finalists}
    pick = min(again, key=again.get)
    # the careful measurement of every config
    rounds = [[_time(r, 25, 100) for r in runs] for _ in range(3)]
    careful = [statistics.median(col) for col in zip(*rounds)]
    best = min(range(len(runs)), key=lambda k: careful[k])
    runs[pick]()
    torch.cuda.synchronize()
    ref = (a.float() @ b.float()).half()
    err = (c.float() - ref.float()).abs().max().item()
    tflops = [2 * n ** 3 / (ms * 1e-3) / 1e12 for ms in careful]
    print(f"{'config':72s} {'search ms':>10s} {'careful ms':>11s} {'TFLOP/s':>8s}")
    for k, (config, _) in enumerate(items):
        mark = ("P" if k == pick else " ") + ("B" if k == best else " ")
        print(f"{mark} {str(config):70s} {first[k]:10.3f} {careful[k]:11.3f} {tflops[k]:8.1f}")
    ratio = careful[pick] / careful[best]
    ok = ratio <= 1 + TOLERANCE and err < 1.0
    print(f"device: {torch.cuda.get_device_name()}; {len(items)} configs of examples/gemm.py at {n}^3 fp16")
    print(f"autotuner's pick {items[pick][0]}: {careful[pick]:.3f} ms = {tflops[pick]:.1f} TFLOP/s; "
          f"best measured {items[best][0]}: {careful[best]:.3f} ms = {tflops[best]:.1f} TFLOP/s; pick/best = "
          f"{ratio:.4f}; max |err| of the pick vs torch {err:.3g} -> {'PASS' if ok else 'FAIL'} (within 3 %)")
    record = {"device": torch.cuda.get_device_name(), "size": n, "pick": pick, "best": best, "ratio": ratio,
              "max_abs_err": err, "pass": ok, "configs": [
                  {"config": cfg, "search_ms": first[k], "careful_ms": careful[k], "tflops": tflops[k]}
                  for k, (cfg, _) in enumerate(items)], "invalid": manifest.get("invalid", [])}
    out.mkdir(parents=True, exist_ok=True)
    (out / "gpu_autotune.json").write_text(json.dumps(record, indent=1))
    return 0 if ok else 1


def main(argv=None) -> int:
    """`build` or `run`."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("build", "run"))
    ap.add_argument("--dir", default=".artifacts/gpu_autotune", help="artifact folder (default .artifacts/gpu_autotune)")
    ap.add_argument("--jobs", type=int, default=2, help="build: nvcc processes (default 2)")
    args = ap.parse_args(argv)
    folder = Path(args.dir)
    folder.mkdir(parents=True, exist_ok=True)
    if args.mode == "build":
        return build(folder, args.jobs)
    return run(folder, Path(os.environ.get("OUT") or folder))


if __name__ == "__main__":
    sys.exit(main())
