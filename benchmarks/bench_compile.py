"""Compile-time benchmark: tile IR -> CUDA source for examples/gemm.py (warm, target <= 0.3 s) and an artifact
disk-cache hit (target <= 10 ms). `python benchmarks/bench_compile.py [--json OUT]`; medians of 10 runs."""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def median_time(fn, n: int = 10) -> float:
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--arch", default="sm_90a")
    args = ap.parse_args(argv)
    from tilelang_core import check_source
    from tilelang_core.codegen import tvm_loader
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import build_artifact
    from tilelang_core.runtime.cache import ArtifactCache

    t0 = time.perf_counter()
    tvm_loader.load()
    import_s = time.perf_counter() - t0
    path = ROOT / "examples" / "gemm.py"
    kernel = check_source(path.read_text(), str(path)).kernels[0]
    t0 = time.perf_counter()
    generate(kernel, args.arch)
    cold = time.perf_counter() - t0
    warm = median_time(lambda: generate(kernel, args.arch))
    figures = {"tvm_import_s": import_s, "gemm_to_cuda_first_s": cold, "gemm_to_cuda_warm_s": warm}
    with tempfile.TemporaryDirectory() as tmp:
        cache = ArtifactCache(tmp)
        t0 = time.perf_counter()
        try:
            build_artifact(kernel, args.arch, cache=cache)
            figures["artifact_build_with_nvcc_s"] = time.perf_counter() - t0
            figures["artifact_cache_hit_s"] = median_time(lambda: build_artifact(kernel, args.arch, cache=cache))
        except Exception as exc:  # no nvcc here
            figures["artifact_error"] = str(exc)[:200]
    targets = {"gemm_to_cuda_warm_s": 0.3, "artifact_cache_hit_s": 0.010}
    for name, value in figures.items():
        if isinstance(value, float):
            goal = f"  (target <= {targets[name]:g} s: {'ok' if value <= targets[name] else 'MISSED'})" \
                if name in targets else ""
            print(f"{name:28} {value * 1000:9.1f} ms{goal}")
        else:
            print(f"{name:28} {value}")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
