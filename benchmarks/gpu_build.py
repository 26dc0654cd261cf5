"""Build every artifact the H200 run needs (examples, tail shapes, benchmark variants) into a folder.

Run here (nvcc + tvm, no GPU): `python benchmarks/gpu_build.py [--arch sm_90a] [--out .gpu_artifacts]`;
then carry the folder to the GPU machine and run `benchmarks/gpu_run.py` there.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# (file, factory, kwargs or None for the file's own instances, role)
TAILS = [
    ("examples/gemm.py", "matmul", dict(M=200, N=136, K=72, block_M=128, block_N=128, block_K=32)),
    ("examples/gemm.py", "matmul", dict(M=130, N=250, K=100, block_M=64, block_N=64, block_K=32)),
    ("examples/softmax.py", "softmax", dict(M=100, N=256, block_M=8)),
    ("examples/rmsnorm.py", "rms_norm", dict(M=100, N=512, block_M=8)),
    ("examples/gemm_transposed_b.py", "matmul_nt", dict(M=136, N=200, K=128, block_M=128, block_N=128, block_K=64)),
]
# kernels beyond the examples: (file, factory, kwargs, reference function, zero the outputs first)
EXTRA = [
    ("benchmarks/gpu_kernels.py", "splitk_matmul", dict(M=256, N=192, K=512), "ref_splitk", True),
    ("benchmarks/gpu_kernels.py", "column_stats", dict(M=64, N=200), "ref_colstats", False),
    ("benchmarks/gpu_kernels.py", "dynamic_matmul", dict(N=192, K=256), "ref_dynamic", False),
]
DIMS = {"M": 300}  # values for symbolic dims when the GPU run makes inputs
GEMM_VARIANTS = [  # block_M, block_N, block_K, stages, threads
    (128, 128, 32, 4, 128), (128, 128, 64, 3, 128), (128, 128, 64, 4, 128), (128, 256, 64, 3, 256),
    (256, 128, 64, 3, 256),
]
FA_VARIANTS = [  # block_M, block_N, stages, threads
    (128, 64, 2, 256), (128, 64, 3, 256), (128, 128, 2, 256), (64, 64, 2, 128),
]


def kernels(path: str, instances: dict | None = None):
    from tilelang_core import check_source

    text = (ROOT / path).read_text()
    res = check_source(text, path, instances=instances)
    if res.errors:
        raise SystemExit(f"{path}: {[d.message for d in res.errors]}")
    return res.kernels


def jobs():
    """(role, path, kernel, reference name, zero outputs) for everything to build."""
    out = []
    for f in sorted((ROOT / "examples").glob("*.py")):
        for k in kernels(f"examples/{f.name}"):
            out.append(("verify", f"examples/{f.name}", k, "ref_program", False))
    for path, factory, kw in TAILS:
        out += [("verify", path, k, "ref_program", False) for k in kernels(path, {factory: [kw]})
                if k.factory == factory]
    for path, factory, kw, ref, zero in EXTRA:
        out += [("verify", path, k, ref, zero) for k in kernels(path, {factory: [kw]}) if k.factory == factory]
    for size in (4096, 8192):
        for bm, bn, bk, st, th in GEMM_VARIANTS:
            kw = dict(M=size, N=size, K=size, block_M=bm, block_N=bn, block_K=bk, num_stages=st, threads=th)
            out += [(f"gemm{size}", "benchmarks/gpu_kernels.py", k, "", False)
                    for k in kernels("benchmarks/gpu_kernels.py", {"bench_matmul": [kw]}) if k.factory == "bench_matmul"]
    for bm, bn, st, th in FA_VARIANTS:
        kw = dict(batch=4, heads=32, seq_len=4096, dim=128, is_causal=False, block_M=bm, block_N=bn,
                  num_stages=st, threads=th)
        out += [("fa", "examples/flash_attention.py", k, "", False)
                for k in kernels("examples/flash_attention.py", {"flash_attention": [kw]})]
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--arch", default="sm_90a")
    ap.add_argument("--out", default=str(ROOT / ".gpu_artifacts"))
    args = ap.parse_args(argv)
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin, from_kernel

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    todo, manifest, failures = jobs(), [], []
    gens = []
    import os

    for variant in ("wgmma", "mma"):  # wgmma where sm_90a allows it, and the mma.sync path for comparison
        if variant == "mma":
            os.environ["TILELSP_DISABLE_WGMMA"] = "1"
        for role, path, k, ref, zero in todo:
            t0 = time.perf_counter()
            try:
                gens.append((f"{role}:{variant}", path, k, generate(k, args.arch), time.perf_counter() - t0,
                             ref, zero))
            except Exception as exc:  # report and go on
                failures.append({"path": path, "instance": k.instance, "error": str(exc)[:400]})
        os.environ.pop("TILELSP_DISABLE_WGMMA", None)
    def compile_one(item):
        role, path, k, ck, gen_s, _, _ = item
        try:
            return item, compile_cubin(ck.source, args.arch), None
        except Exception as exc:  # noqa: BLE001
            return item, None, str(exc)[-600:]
    with ThreadPoolExecutor(max_workers=4) as pool:
        for (role, path, k, ck, gen_s, ref, zero), cubin, err in pool.map(compile_one, gens):
            if err:
                failures.append({"path": path, "instance": k.instance, "error": err})
                continue
            art = from_kernel(ck, k, args.arch, cubin)
            meta = art.save(out)
            manifest.append({"role": role, "path": path, "instance": k.instance, "meta": meta.name,
                             "ref": ref, "zero_outputs": zero, "dims": DIMS,
                             "bindings": {n: v for n, v in k.bindings if isinstance(v, (int, float, bool, str))},
                             "gen_s": round(gen_s, 3)})
    (out / "manifest.json").write_text(json.dumps({"arch": args.arch, "items": manifest, "failures": failures},
                                                  indent=1))
    print(f"built {len(manifest)} artifacts into {out}; {len(failures)} failures")
    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
