"""Hopper speed run (issue 11): the TMA + warp-specialised GEMM and attention beside cuBLAS and SDPA, one process.

Here (nvcc + tvm, no GPU): `python benchmarks/gpu_hopper.py build [--out .gpu_hopper]` lowers every kernel for sm_90a
twice (TMA/warp-specialised, and with TILELSP_DISABLE_TMA=1: the cp.async path) and saves the artifacts.
`build --only fp8` (roles whose name starts with a given prefix: gemm, tail, attn, fp8) builds a part;
`--variant NAME ROLE VAR=VALUE` builds ROLE's timed kernels once more with a lowering switch set (path column NAME);
`run --meta NAME.. --check-only` runs chosen artifacts once, checked and untimed (for ncu / compute-sanitizer);
`run --pairs N` times each kernel and its torch anchor alternately N times and reports the ratio of the medians.
On the H200 (torch, triton; no tvm): `python benchmarks/gpu_hopper.py run [--art .gpu_hopper]` checks every
artifact's output against torch (fresh random inputs, NaN-poisoned outputs), times them with do_bench (medians)
beside torch.matmul / SDPA / torch._scaled_mm in the same process, prints a table last and writes hopper<ART>.json into
$OUT. The fp8 rows (e4m3, per-tensor scales, bf16 output) are checked against fp32 products of the dequantised
operands and their roofline column is the fraction of the H200's ~1979 TFLOP/s dense fp8 peak.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

GEMMS = [  # size, dtype, block_M, block_N, block_K, stages, threads (consumers), rasterisation panel (0: none given)
    (8192, "float16", 128, 256, 64, 3, 256, 8), (8192, "float16", 128, 256, 64, 4, 256, 8),
    (8192, "float16", 128, 256, 64, 4, 256, 1), (8192, "float16", 128, 128, 64, 4, 128, 8),
    (4096, "float16", 128, 256, 64, 3, 256, 8), (4096, "float16", 128, 256, 64, 4, 256, 8),
    (4096, "float16", 128, 128, 64, 4, 128, 8),
    (8192, "bfloat16", 128, 256, 64, 4, 256, 8), (4096, "bfloat16", 128, 256, 64, 4, 256, 8),
    (8192, "bfloat16", 128, 256, 64, 3, 256, 8), (4096, "bfloat16", 128, 256, 64, 3, 256, 8),  # room for a TMA store
    (4096, "float16", 128, 256, 64, 3, 256, 4), (4096, "bfloat16", 128, 256, 64, 3, 256, 4),
    (4096, "bfloat16", 128, 256, 64, 3, 256, 16),
    (8192, "bfloat16", 256, 128, 64, 3, 256, 8), (4096, "bfloat16", 256, 128, 64, 3, 256, 4),  # M-major tile
    (8192, "float16", 256, 128, 64, 3, 256, 8), (4096, "float16", 256, 128, 64, 3, 256, 4),
    (8192, "bfloat16", 128, 256, 32, 6, 256, 8), (4096, "bfloat16", 128, 256, 32, 6, 256, 4),  # deeper, thinner
    (8192, "bfloat16", 128, 256, 64, 3, 256, 4), (8192, "bfloat16", 128, 256, 64, 3, 256, 16),
    (4096, "bfloat16", 128, 256, 64, 4, 256, 4), (4096, "float16", 128, 256, 64, 4, 256, 4),  # 4 stages: a staging ring
    (4096, "bfloat16", 256, 128, 64, 4, 256, 4), (4096, "float16", 256, 128, 64, 4, 256, 4),  # a ring of one slot
    (4096, "float16", 128, 256, 64, 3, 256, 16), (8192, "float16", 128, 256, 64, 3, 256, 16),  # a wave of 16 x 8
    (4096, "float16", 128, 256, 64, 4, 256, 16), (4096, "bfloat16", 128, 256, 64, 4, 256, 16),  # tiles: less DRAM
    (8192, "float16", 128, 256, 64, 4, 256, 16), (8192, "bfloat16", 128, 256, 64, 4, 256, 16),
    (8192, "float16", 128, 256, 64, 3, 256, 0), (4096, "float16", 128, 256, 64, 3, 256, 0),  # panel 0: no
    (8192, "bfloat16", 128, 256, 64, 3, 256, 0), (4096, "bfloat16", 128, 256, 64, 3, 256, 0),  # T.use_swizzle
]
TAILS = [  # M, N, K, block_M, block_N, block_K, stages, threads, panel: odd shapes (TMA zero-fills the edge)
    (200, 136, 72, 128, 128, 32, 3, 128, 1), (264, 392, 136, 128, 256, 64, 3, 256, 3),
    (1000, 1800, 136, 128, 256, 64, 4, 256, 3), (130, 250, 100, 64, 64, 32, 3, 128, 1),
    (1000, 1800, 200, 128, 256, 64, 3, 256, 4),  # clusters of two apply (64 tiles, pairs keep bx): clipped edges
    (1000, 1800, 200, 128, 256, 64, 4, 256, 4),  # the same with a staging ring stored per warpgroup band
    (2300, 2200, 2000, 128, 256, 64, 4, 256, 3), (2300, 2200, 2000, 128, 128, 64, 4, 128, 3),  # stream-K on a
    # partial last wave (162 / 306 tiles over 132 blocks) with clipped edges; the second keeps a wgmma in flight
    (1000, 1800, 200, 128, 256, 64, 3, 256, 0), (2300, 2200, 2000, 128, 128, 64, 4, 128, 0),  # no T.use_swizzle:
    # the default panels (16 rows over 8, one panel; 12 over 18, a partial last panel, with stream-K)
]
FP8 = [  # size, block_M, block_N, block_K, stages, threads (consumers), panel: e4m3 A (M x K), B (N x K)
    (8192, 128, 256, 128, 3, 256, 8), (8192, 128, 256, 128, 4, 256, 16), (8192, 128, 256, 128, 4, 256, 8),
    (8192, 128, 256, 256, 2, 256, 16), (8192, 128, 128, 128, 4, 128, 8),
    (4096, 128, 256, 128, 3, 256, 4), (4096, 128, 256, 128, 4, 256, 8), (4096, 128, 256, 256, 2, 256, 4),
]
FP8_TAILS = [  # M, N, K, block_M, block_N, block_K, stages, threads, panel, dtype (K % 16 == 0: TMA's stride rule)
    (264, 392, 208, 128, 256, 128, 3, 256, 3, "float8_e4m3fn"), (200, 136, 96, 128, 128, 64, 3, 128, 1,
                                                                 "float8_e4m3fn"),
    (264, 392, 336, 128, 256, 256, 2, 256, 3, "float8_e4m3fn"), (200, 136, 208, 128, 128, 128, 3, 128, 1,
                                                                 "float8_e5m2"),
    (2300, 2200, 4096, 128, 256, 128, 3, 256, 3, "float8_e4m3fn"),  # stream-K, its scale epilogue in the finisher
]
KERNELS = "benchmarks/gpu_hopper_kernels.py"
ATTN = [  # causal, block_M, block_N, stages, threads
    (False, 128, 64, 2, 256), (False, 128, 128, 2, 256), (True, 128, 64, 2, 256), (True, 128, 128, 2, 256),
    (False, 128, 128, 3, 256), (True, 128, 128, 3, 256),  # 3 stages: the overlapped loop holds stage k-1 longer
]


def _kernels(path: str, factory: str, kw: dict):
    from tilelang_core import check_source

    res = check_source((ROOT / path).read_text(), path, instances={factory: [kw]})
    return [k for k in res.kernels if k.factory == factory]  # generate() refuses any with errors


def jobs():
    """(role, kernel, info) for every artifact."""
    out = []
    for size, dt, bm, bn, bk, st, th, pn in GEMMS:
        kw = dict(M=size, N=size, K=size, block_M=bm, block_N=bn, block_K=bk, num_stages=st, threads=th, panel=pn,
                  dtype=dt)
        out += [("gemm", k, dict(M=size, N=size, K=size, dtype=dt, tile=f"{bm}x{bn}x{bk} s{st} t{th} p{pn or 'auto'}"))
                for k in _kernels(KERNELS, "hopper_matmul", kw)]
    for m, n, kk, bm, bn, bk, st, th, pn in TAILS:
        kw = dict(M=m, N=n, K=kk, block_M=bm, block_N=bn, block_K=bk, num_stages=st, threads=th, panel=pn)
        out += [("tail", k, dict(M=m, N=n, K=kk, dtype="float16", tile=f"{bm}x{bn}x{bk} s{st} t{th} p{pn or 'auto'}"))
                for k in _kernels(KERNELS, "hopper_matmul", kw)]
    for causal, bm, bn, st, th in ATTN:
        kw = dict(batch=4, heads=32, seq_len=4096, dim=128, is_causal=causal, block_M=bm, block_N=bn, num_stages=st,
                  threads=th)
        out += [("attn", k, dict(causal=causal, tile=f"{bm}x{bn} s{st} t{th}"))
                for k in _kernels("examples/flash_attention.py", "flash_attention", kw)]
    kw = dict(batch=1, heads=2, seq_len=256, dim=128, is_causal=True, block_M=128, block_N=64, num_stages=2, threads=256)
    out += [("attn_check", k, dict(causal=True, tile="128x64 s2 t256", small=True))
            for k in _kernels("examples/flash_attention.py", "flash_attention", kw)]
    for size, bm, bn, bk, st, th, pn in FP8:
        kw = dict(M=size, N=size, K=size, block_M=bm, block_N=bn, block_K=bk, num_stages=st, threads=th, panel=pn)
        info = dict(M=size, N=size, K=size, dtype="float8_e4m3fn", tile=f"{bm}x{bn}x{bk} s{st} t{th} p{pn}")
        out += [("fp8", k, info) for k in _kernels(KERNELS, "hopper_fp8_matmul", kw)]
    for m, n, kk, bm, bn, bk, st, th, pn, dt in FP8_TAILS:
        kw = dict(M=m, N=n, K=kk, block_M=bm, block_N=bn, block_K=bk, num_stages=st, threads=th, panel=pn, dtype=dt)
        info = dict(M=m, N=n, K=kk, dtype=dt, tile=f"{bm}x{bn}x{bk} s{st} t{th} p{pn}")
        out += [("fp8_tail", k, info) for k in _kernels(KERNELS, "hopper_fp8_matmul", kw)]
    return out


def _cp_async_too(role: str, n: int, all_jobs: list) -> bool:
    """The cp.async path is built for the tails, the small attention and the first kernel of each timed role."""
    return role in ("tail", "attn_check", "fp8_tail") or n == next(i for i, j in enumerate(all_jobs) if j[0] == role)


def build(out: Path, only: tuple = (), variants: tuple = (), tiles: tuple = ()) -> None:
    """Build the artifacts and their manifest; `variants`: (name, role prefix, "VAR=value") passes that build the
    timed kernels of those roles once more with a lowering switch set (path column `name`; a switch named "tl.*"
    is a TileLang pass config, e.g. tl.enable_fast_math=1, as `pass_configs=` on tilelang.jit gives it); `tiles`:
    only the kernels whose tile text (e.g. "128x256x64 s3 t256 p8") contains one of these."""
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin, from_kernel

    out.mkdir(parents=True, exist_ok=True)
    manifest = []
    passes = [("tma", None, {}), ("cp.async", None, {"TILELSP_DISABLE_TMA": "1"})]
    passes += [(name, prefix, dict(kv.split("=", 1) for kv in setting.split(","))) for name, prefix, setting in variants]
    for path_kind, prefix, env in passes:
        configs = {k: v not in ("0", "false", "False", "") for k, v in env.items() if k.startswith("tl.")}
        env = {k: v for k, v in env.items() if k not in configs}
        os.environ.update(env)
        all_jobs = jobs()
        for n, (role, k, info) in enumerate(all_jobs):
            if only and not role.startswith(tuple(only)) or prefix and role != prefix:
                continue
            if tiles and not any(t in info["tile"] for t in tiles):
                continue
            if path_kind == "cp.async" and not _cp_async_too(role, n, all_jobs):
                continue  # the cp.async path: tails, the small attention and one kernel of each role for comparison
            t0 = time.perf_counter()
            if configs:  # as tilelang.jit(pass_configs=...) gives them, on top of the source's own
                k = k.with_pass_configs(configs)
            ck = generate(k, "sm_90a")
            gen_s = time.perf_counter() - t0
            art = from_kernel(ck, k, "sm_90a", compile_cubin(ck.source, "sm_90a"))
            meta = art.save(out)
            kind = path_kind if prefix else "tma" if art.tensor_maps else "cp.async"
            manifest.append(dict(info, role=role, path=kind, meta=meta.name, instance=k.instance,
                                 gen_s=round(gen_s, 3)))
            print(f"{role:10s} {kind:8s} {info['tile']:20s} gen {gen_s:.2f}s {k.instance[:70]}", flush=True)
        for name in env:
            os.environ.pop(name)
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1))


def run(art_dir: Path, out_dir: Path, metas: tuple = (), check_only: bool = False, pairs: int = 1) -> None:
    """Check and time the manifest's artifacts (only those whose meta file name contains one of `metas`; with
    `check_only` each runs once and is checked, untimed: for ncu and compute-sanitizer). With `pairs` > 1 each
    timed kernel and its torch anchor are timed alternately that many times and the ratio is of the two medians
    (the GPU's clock drifts between two timings seconds apart; alternating puts both sides in the same state)."""
    import torch
    from triton.testing import do_bench

    from tilelang_core.runtime.artifact import Artifact
    from tilelang_core.runtime.launch import launch, launched_grid

    manifest = json.loads((art_dir / "manifest.json").read_text())
    manifest = [i for i in manifest if not metas or any(m in i["meta"] for m in metas)]
    rows, report = [], {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "items": []}

    def bench(fn):
        if check_only:
            return None
        return do_bench(fn, warmup=100, rep=400, return_mode="median")

    def paired(ours, anchor):
        """(median ms of ours, median ms of the anchor, spread of ours) over `pairs` alternate timings."""
        a, b = [], []
        for _ in range(pairs):
            a.append(do_bench(ours, warmup=25, rep=200, return_mode="median"))
            b.append(do_bench(anchor, warmup=25, rep=200, return_mode="median"))
        a.sort(), b.sort()
        return a[len(a) // 2], b[len(b) // 2], (a[-1] - a[0]) / a[len(a) // 2]

    def rel(o, r):
        o, r = o.double(), r.double()
        return float("inf") if torch.isnan(o).any() else float((o - r).norm() / r.norm())

    anchors = {}
    for item in manifest:
        art = Artifact.load(art_dir / item["meta"])
        torch.manual_seed(len(report["items"]))
        try:
            if item["role"] in ("fp8", "fp8_tail"):
                label, key, err, ms, flops = _fp8_item(item, art, launch, bench, rel, anchors)
            elif item["role"] in ("gemm", "tail"):
                dt = getattr(torch, item["dtype"])
                a = torch.randn(item["M"], item["K"], device="cuda", dtype=dt)
                b = torch.randn(item["K"], item["N"], device="cuda", dtype=dt)
                c = torch.full((item["M"], item["N"]), float("nan"), device="cuda", dtype=dt)
                launch(art, [a, b, c])
                torch.cuda.synchronize()
                err = rel(c, a.float() @ b.float())
                c.fill_(float("nan"))  # again: this launch reuses the first one's packed arguments (runtime.launch)
                launch(art, [a, b, c])
                torch.cuda.synchronize()
                err = max(err, rel(c, a.float() @ b.float()))
                if art.cluster > 1:  # the blocks a clustered persistent kernel ran on (whole resident clusters)
                    item["grid"] = launched_grid(art, [a, b, c])[0]
                flops = 2 * item["M"] * item["N"] * item["K"]
                ms = bench(lambda: launch(art, [a, b, c])) if item["role"] == "gemm" else None
                key = ("gemm", item["M"], item["dtype"])
                if ms is not None and key not in anchors:
                    anchors[key] = bench(lambda: torch.matmul(a, b))
                if ms is not None and pairs > 1:
                    ms, item["pair_anchor_ms"], item["spread"] = paired(lambda: launch(art, [a, b, c]),
                                                                        lambda: torch.matmul(a, b))
                label = f"{item['dtype']} GEMM {item['M']}^3" if item["role"] == "gemm" else \
                    f"tail {item['M']}x{item['N']}x{item['K']}"
            else:
                from torch.nn.functional import scaled_dot_product_attention as sdpa

                b_, h, s, d = (1, 2, 256, 128) if item.get("small") else (4, 32, 4096, 128)
                q, k, v = (torch.randn(b_, h, s, d, device="cuda", dtype=torch.float16) for _ in range(3))
                o = torch.full_like(q, float("nan"))
                launch(art, [q, k, v, o])
                torch.cuda.synchronize()
                err = rel(o, sdpa(q.float(), k.float(), v.float(), is_causal=item["causal"]))
                flops = 4 * b_ * h * s * s * d // (2 if item["causal"] else 1)
                ms = None if item.get("small") else bench(lambda: launch(art, [q, k, v, o]))
                key = ("attn", item["causal"])
                if ms is not None and key not in anchors:
                    anchors[key] = bench(lambda: sdpa(q, k, v, is_causal=item["causal"]))
                    from torch.nn.attention import SDPBackend, sdpa_kernel

                    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                        anchors[key + ("flash",)] = bench(lambda: sdpa(q, k, v, is_causal=item["causal"]))
                if ms is not None and pairs > 1:
                    ms, item["pair_anchor_ms"], item["spread"] = paired(
                        lambda: launch(art, [q, k, v, o]), lambda: sdpa(q, k, v, is_causal=item["causal"]))
                label = f"attention{' causal' if item['causal'] else ''}" + (" (check)" if item.get("small") else "")
            status = "PASS" if err < 2e-2 else "FAIL"
            anchor = item.get("pair_anchor_ms", anchors.get(key)) if ms is not None else None
            row = dict(item, label=label, status=status, err=err, ms=ms, tflops=flops / ms / 1e9 if ms else None,
                       anchor_ms=anchor, ratio=anchor / ms if ms and anchor else None)
        except Exception as exc:  # noqa: BLE001 - report and go on
            row = dict(item, label=item["role"], status="ERROR", err=None, ms=None, tflops=None, anchor_ms=None,
                       ratio=None, error=f"{type(exc).__name__}: {exc}"[:300])
        report["items"].append(row)
        rows.append(row)
        print(f"{row['status']:5s} {row['label']:22s} {row['path']:8s} {row['tile']:18s} err={row['err']} "
              f"ms={row['ms']} {row.get('error', '')}", flush=True)
    report["anchors"] = {" ".join(map(str, k)): v for k, v in anchors.items()}
    (out_dir / f"hopper{art_dir.name}.json").write_text(json.dumps(report, indent=1))  # one file per artifact set
    print("\nanchors (ms, median):", {" ".join(map(str, k)): round(v, 4) for k, v in anchors.items()})
    print(f"{'kernel':22s} {'path':8s} {'tile':18s} {'ms':>7s} {'TFLOP/s':>8s} {'vs torch':>8s} {'of pk':>6s} err"
          "   (peak: 990 fp16/bf16, 1979 fp8; fp8 'vs torch' is torch._scaled_mm)")
    for r in rows:
        if r["ms"]:
            peak = 1979 if r["role"] == "fp8" else 990
            fast = anchors.get(("fp8", r["M"], "fast_accum")) if r["role"] == "fp8" else None
            print(f"{r['label']:22s} {r['path']:8s} {r['tile']:18s} {r['ms']:7.3f} {r['tflops']:8.1f} "
                  f"{r['ratio'] or 0:8.3f} {r['tflops'] / peak:6.2f} {r['err']:.1e}"
                  + (f"  vs use_fast_accum=True {fast / r['ms']:.3f}" if fast else "")
                  + (f"  launch {r['launch_us']} us" if r.get("launch_us") else "")
                  + (f"  grid {r['grid']} blocks" if r.get("grid") else "")
                  + (f"  paired x{pairs}, spread {r['spread']:.3f}" if "spread" in r else ""))
    bad = [r for r in rows if r["status"] != "PASS"]
    print(f"{len(rows) - len(bad)}/{len(rows)} outputs match torch" + (f"; not: {[r['label'] for r in bad]}" if bad
                                                                         else ""))


def _fp8_item(item, art, launch, bench, rel, anchors):
    """Check (and for role fp8, time) one fp8 GEMM artifact beside torch._scaled_mm on the same operands:
    A row-major M x K, B given N x K (so B.t() is the column-major K x N operand _scaled_mm requires), per-tensor
    float32 scales, bf16 output. The reference is the fp32 product of the dequantised operands."""
    import torch

    m, n, k = item["M"], item["N"], item["K"]
    fp8 = getattr(torch, item["dtype"])

    def quantize(x):
        scale = (x.abs().max() / torch.finfo(fp8).max).reshape(1)
        return (x / scale).to(fp8), scale

    a, sa = quantize(torch.randn(m, k, device="cuda"))
    b, sb = quantize(torch.randn(n, k, device="cuda"))
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    launch(art, [a, b, sa, sb, c])
    torch.cuda.synchronize()
    ref = (a.float() @ b.float().T) * (sa * sb)
    err = rel(c, ref)
    ms = bench(lambda: launch(art, [a, b, sa, sb, c])) if item["role"] == "fp8" else None
    if ms is not None:  # the launcher's host time per call (~0.1 ms on the H200: under the kernel plus do_bench's
        # cache clearing, so the timed kernel never waits for its launch)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(20):
            launch(art, [a, b, sa, sb, c])
        item["launch_us"] = round((time.perf_counter() - t0) / 20 * 1e6, 1)
        torch.cuda.synchronize()
    key = ("fp8", m)
    if ms is not None and key not in anchors:
        def scaled_mm(fast=False):
            return torch._scaled_mm(a, b.t(), scale_a=sa, scale_b=sb, out_dtype=torch.bfloat16, use_fast_accum=fast)

        anchors[key] = bench(scaled_mm)  # the default: cuBLAS promotes partial sums to fp32 (our wgmma never does)
        anchors[key + ("fast_accum",)] = bench(lambda: scaled_mm(True))
        anchors[key + ("scaled_mm_err",)] = rel(scaled_mm(), ref)  # the anchors compute the same function
        anchors[key + ("fast_accum_err",)] = rel(scaled_mm(True), ref)
    label = f"fp8 e4m3 GEMM {m}^3" if item["role"] == "fp8" else f"{item['dtype'][7:11]} tail {m}x{n}x{k}"
    return label, key, err, ms, 2 * m * n * k


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("build", "run"))
    ap.add_argument("--out", default=str(ROOT / ".gpu_hopper"))
    ap.add_argument("--art", default=str(ROOT / ".gpu_hopper"))
    ap.add_argument("--only", nargs="*", default=(), help="build only roles starting with these (gemm tail attn fp8)")
    ap.add_argument("--variant", nargs=3, action="append", default=[], metavar=("NAME", "ROLE", "VAR=VALUE"),
                    help="also build ROLE's kernels with VAR=VALUE set (e.g. tma-wait0 fp8 TILELSP_WGMMA_INFLIGHT=0; "
                         "several: A=1,B=0; tl.enable_fast_math=1: a pass config)")
    ap.add_argument("--tile", nargs="*", default=(), help="build only kernels whose tile text contains one of these")
    ap.add_argument("--meta", nargs="*", default=(), help="run only artifacts whose meta file name contains these")
    ap.add_argument("--check-only", action="store_true", help="run each artifact once and check it, untimed")
    ap.add_argument("--pairs", type=int, default=1, help="time each GEMM / attention and its torch anchor "
                    "alternately this many times (ratio of the medians)")
    args = ap.parse_args(argv)
    if args.mode == "build":
        build(Path(args.out), tuple(args.only), tuple(map(tuple, args.variant)), tuple(args.tile))
    else:
        run(Path(args.art), Path(os.environ.get("OUT", ".")), tuple(args.meta), args.check_only, args.pairs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
