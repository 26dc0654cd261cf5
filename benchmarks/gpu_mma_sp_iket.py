"""H200 check of the compat features of issue 8: TileLang's TensorCoreIntrinEmitter GEMM (per-thread fragments +
mma.sync, fp16 and int8, transposed or not), T.gemm_sp (2:4 sparse A decompressed into shared memory) and iket
tracing (records read back after the launch into a .trace.json), each against torch.

Here (nvcc + tvm): `python benchmarks/gpu_mma_sp_iket.py build [--out .artifacts/mma_sp_iket]`;
on the GPU machine: `python3 benchmarks/gpu_mma_sp_iket.py run [--art .artifacts/mma_sp_iket]` (one line each).
"""
from __future__ import annotations

import argparse
import json
import os
import runpy
import sys
import tempfile
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "alias"), str(ROOT / "tests" / "codegen")]
M = N = K = 256
EMITTER_CASES = [("float16", "float32", False, True, 1, 16, False), ("float16", "float32", True, False, 2, 8, True),
                 ("int8", "int32", False, True, 1, 16, False), ("int8", "int32", False, True, 2, 32, False)]


def _module(name: str, source: str) -> dict:
    path = Path(tempfile.mkdtemp()) / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    return runpy.run_path(str(path), run_name=name)


def build(out: Path) -> None:
    """Build every kernel for sm_90a into `out` with a manifest."""
    import tilelang_core

    tilelang_core.install_alias(force=True)
    import test_gemm_sp
    import test_iket
    import test_mma_emitter
    from tilelang.tools.cuda import iket

    out.mkdir(parents=True, exist_ok=True)
    items = []
    emitter = _module("mma_emitter_kernels", test_mma_emitter.KERNELS)["emitter_gemm"]
    for dtype, accum, a_t, b_t, cols, warp_n, two_d in EMITTER_CASES:
        k = emitter("sm_90a", dtype, accum, a_t, b_t, cols=cols, warp_n=warp_n, two_d=two_d)(M, N, K)
        meta = k._backend.artifact.save(out / f"emitter_{len(items)}")
        items.append({"kind": "emitter", "meta": str(meta.relative_to(out)), "case": [dtype, a_t, b_t]})
    sparse = _module("gemm_sp_kernels", test_gemm_sp.KERNELS)["sparse_gemm"]
    for trans_a in (False, True):
        k = sparse("sm_90a", trans_a, False)(M, N, K)
        meta = k._backend.artifact.save(out / f"gemm_sp_{int(trans_a)}")
        items.append({"kind": "gemm_sp", "meta": str(meta.relative_to(out)), "case": [trans_a]})
    import tilelang

    traced = _module("iket_kernels", test_iket.KERNELS)
    with iket.session():
        k = tilelang.compile(traced["traced_add"](1000), out_idx=-1, target="sm_90a")
    meta = k._backend.artifact.save(out / "iket")
    items.append({"kind": "iket", "meta": str(meta.relative_to(out)), "case": [1000]})
    (out / "manifest.json").write_text(json.dumps(items, indent=1))
    print(f"built {len(items)} kernels into {out}")


def _semi_sparse(torch, m: int, k: int):
    """A random fp16 (m, k) matrix with 2 nonzeros in every group of 4 along k."""
    keep = torch.rand(m, k // 4, 4).argsort(-1)[..., :2]
    mask = torch.zeros(m, k // 4, 4, dtype=torch.bool).scatter_(-1, keep, True)
    return torch.randn(m, k).half() * mask.reshape(m, k)


def _compress(torch, a):
    """Kept values (m, k/2) and int16 natural row-major metadata (4 bits a group, lowest group lowest)."""
    m, k = a.shape
    idx = torch.sort(torch.sort((a.reshape(m, k // 4, 4) != 0).int(), dim=-1, descending=True, stable=True)
                     .indices[..., :2], -1).values
    values = a.reshape(m, k // 4, 4).gather(-1, idx).reshape(m, k // 2)
    nibbles = (idx[..., 0] | (idx[..., 1] << 2)).reshape(m, -1, 4).long()
    meta = sum(nibbles[..., i] << (4 * i) for i in range(4))
    return values, torch.where(meta >= 2 ** 15, meta - 2 ** 16, meta).to(torch.int16)


def run(art: Path) -> int:
    """Launch each kernel and compare with torch; the iket kernel's trace must hold its markers and ranges."""
    import torch

    from tilelang_core.runtime import iket_trace
    from tilelang_core.runtime.artifact import Artifact
    from tilelang_core.runtime.launch import launch

    failures = 0
    torch.manual_seed(0)
    for item in json.loads((art / "manifest.json").read_text()):
        a = Artifact.load(art / item["meta"])
        if item["kind"] == "emitter":
            dtype, a_t, b_t = item["case"]
            if dtype == "int8":
                x, y = torch.randint(-8, 8, (M, K), dtype=torch.int8), torch.randint(-8, 8, (K, N), dtype=torch.int8)
                ref, out = x.int() @ y.int(), torch.zeros(M, N, dtype=torch.int32)
            else:
                x, y = torch.randn(M, K).half(), torch.randn(K, N).half()
                ref, out = x.float() @ y.float(), torch.zeros(M, N)
            args = [(x.t() if a_t else x).contiguous(), (y.t() if b_t else y).contiguous(), out]
        elif item["kind"] == "gemm_sp":
            (trans_a,) = item["case"]
            dense = _semi_sparse(torch, M, K)
            y = torch.randn(K, N).half()
            values, meta = _compress(torch, dense)
            if trans_a:
                values, meta = values.t().contiguous(), meta.t().contiguous()
            ref, out = dense.float() @ y.float(), torch.zeros(M, N)
            args = [values, meta, y, out]
        else:
            n = item["case"][0]
            x = torch.randn(n)
            ref, out = x + 1.0, torch.zeros(n)
            args = [x, out]
        args = [t.cuda() for t in args]
        launch(a, args)
        torch.cuda.synchronize()
        err = float((args[-1].float().cpu() - ref.float()).abs().max())
        ok = err <= 1e-2 * (1 + float(ref.float().abs().max()))
        note = ""
        if item["kind"] == "iket":
            trace = iket_trace.LAUNCHES[-1] if iket_trace.LAUNCHES else {}
            names = {m["name"] for m in trace.get("markers", [])} | {r["name"] for r in trace.get("ranges", [])}
            ok = ok and {"block_enter", "store", "block_exit", "block_total", "tail"} <= names
            stores = [m for m in trace.get("markers", []) if m["name"] == "store"]
            note = f" records={trace.get('records')} markers={len(trace.get('markers', []))} " \
                   f"ranges={len(trace.get('ranges', []))} first store payloads={[m.get('payloadVal') for m in stores[:3]]}"
        failures += not ok
        print(f"{'ok  ' if ok else 'FAIL'} {item['kind']:8s} {item['case']} max abs error {err:.3g}{note}", flush=True)
    return 1 if failures else 0


def main(argv=None) -> int:
    """`build` here, `run` on the GPU machine."""
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=("build", "run"))
    ap.add_argument("--out", default=str(ROOT / ".artifacts" / "mma_sp_iket"))
    ap.add_argument("--art", default=str(ROOT / ".artifacts" / "mma_sp_iket"))
    args = ap.parse_args(argv)
    if args.mode == "build":
        build(Path(args.out))
        return 0
    os.environ.setdefault("TL_IKET_RUNTIME_PAYLOADS", "1")
    return run(Path(args.art))


if __name__ == "__main__":
    sys.exit(main())
