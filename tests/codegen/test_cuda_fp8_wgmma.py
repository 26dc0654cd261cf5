"""fp8 (e4m3 / e5m2) GEMMs: on sm_90a K-major shared operands lower to wgmma m64nNk32 through the warp-specialised
TMA pipeline (128-byte atoms are 128 fp8 columns); B given K x N and sm_80 keep the FMA gemm; the CPU backend runs
the per-tensor-scaled example and converts fp8 like torch."""
from __future__ import annotations

import shutil

import pytest

from tilelang_core import check_source, lower
from tilelang_core.codegen.cuda import generate
from tests.conftest import EXAMPLES, ROOT

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

KERNELS = ROOT / "benchmarks" / "gpu_hopper_kernels.py"

KN_SOURCE = '''
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def fp8_kn(M, N, K, block_M=128, block_N=128, block_K=128, dtype=T.float8_e4m3fn):
    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_s = T.alloc_shared((block_M, block_K), dtype)
            B_s = T.alloc_shared((block_K, block_N), dtype)
            C_l = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, ko * block_K], A_s)
                T.copy(B[ko * block_K, bx * block_N], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * block_M, bx * block_N])

    return main
'''


def _kernel(source: str, path: str, factory: str, **kw):
    res = check_source(source, path, instances={factory: [kw]})
    assert not res.errors, [d.message for d in res.errors]
    return next(k for k in res.kernels if k.factory == factory)


def _bench(**kw):
    return _kernel(KERNELS.read_text(), str(KERNELS), "hopper_fp8_matmul", **kw)


@pytest.fixture(scope="module")
def big():
    return generate(_bench(M=1024, N=1024, K=1024), "sm_90a")


def test_fp8_gemm_lowers_to_wgmma_k32_in_the_warp_specialised_tma_pipeline(big):
    src = big.source
    assert "wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e4m3" in src
    assert "tl::gemm_fma" not in src.split('extern "C" __global__')[-1]
    assert big.block == (384, 1, 1) and "tl::reg_alloc<232>()" in src and "tl::reg_dealloc<40>()" in src
    maps = {m["tensor"]: m for m in big.tensor_maps}
    # one 128-byte atom of 128 fp8 columns per row: one box per operand and stage (innermost first)
    assert maps["A"]["box"] == [128, 128] and maps["B"]["box"] == [128, 256]
    assert maps["A"]["swizzle"] == maps["B"]["swizzle"] == 128 and maps["A"]["dtype"] == "float8_e4m3fn"
    assert src.count("tl::tma_load_2d(") == 2 * 2 and "tl::mbar_expect_tx(" in src  # whole tiles, stream-K pieces
    # 4 stages of fp8 tiles, the full + empty barriers (to 1024 bytes), a ring of two 128x64 bf16 staging atoms
    assert big.smem_bytes == 4 * (128 * 128 + 256 * 128) + 1024 + 2 * 128 * 64 * 2
    assert src.count("tl::tma_store_2d(C_tmap") == 2 * 4 and src.count("tl::bulk_wait_read<1>();") == 2 * 4
    # 4 k32 steps of 32 bytes per 128-column tile, descriptors with the 128-byte swizzle (mode 1, SBO 1024)
    assert "for (int kk = 0; kk < 4; ++kk)" in src and ", 16, 1024, 1)" in src


def test_one_consumer_warpgroup_keeps_one_wgmma_group_in_flight():
    import re

    ck = generate(_bench(M=1024, N=1024, K=1024, block_N=128, threads=128), "sm_90a")
    src = ck.source.split('extern "C" __global__')[-1]
    body = src[src.index("C_local_ptr[r] = 0x0p"):]  # the consumer warpgroup, after T.clear
    peeled, loop = body.split("for (int ko_i", 1)
    assert peeled.count("tl_gemm_wgmma_") == peeled.count("tl::mbar_wait(") == 1  # k = 0 before the loop
    # K = 1024 in 8 k-steps: iteration k (1..7) waits for stage k % 4 (`& 3`), issues wgmma k, waits until wgmma
    # k-1 is done (its 2 x 64 accumulators pinned) and only then releases stage k-1 on empty[]
    head = re.search(r"ko_i(_\d+)? = 0; ko_i\1? < 7;", "for (int ko_i" + loop)
    assert head, loop[:200]
    it = "ko_i" + (head.group(1) or "")
    step = loop.split("}", 1)[0]
    assert step.index("tl_gemm_wgmma_") < step.index("tl::wgmma_wait_fenced<1, 128>(") < step.index(
        f"tl::mbar_arrive((&(((uint64_t*)smem_ptr)[(({it} & 3) + ")
    assert "tl::wgmma_wait_fenced<0, 128>(" in loop.split("}", 1)[1].split("// tilelang source line")[0]
    fn = ck.source.split("void tl_gemm_wgmma_0(")[1].split("\n}\n")[0]
    assert "wait_group" not in fn and 'asm volatile("" : "+f"(C[i])::"memory");' in fn


def test_two_warpgroups_two_stages_and_the_switch_keep_a_wait_per_k_step(big, monkeypatch):
    def waits(ck):
        return "wgmma_wait_fenced" not in ck.source and "wgmma.wait_group.sync.aligned 0;" in ck.source

    fp16 = _kernel(KERNELS.read_text(), str(KERNELS), "hopper_matmul", M=1024, N=1024, K=1024)
    assert waits(big) and waits(generate(fp16, "sm_90a"))  # two consumer warpgroups: the other hides the wait
    assert waits(generate(_bench(M=1024, N=1024, K=1024, block_N=128, threads=128, num_stages=2), "sm_90a"))
    monkeypatch.setenv("TILELSP_WGMMA_INFLIGHT", "0")
    assert waits(generate(_bench(M=1024, N=1024, K=1024, block_N=128, threads=128), "sm_90a"))
    monkeypatch.setenv("TILELSP_WGMMA_INFLIGHT", "1")
    assert "tl::wgmma_wait_fenced<1, 128>(" in generate(fp16, "sm_90a").source


def test_e5m2_and_a_64_column_k_tile_use_the_64_byte_swizzle():
    ck = generate(_bench(M=256, N=256, K=256, block_K=64, dtype="float8_e5m2", num_stages=3), "sm_90a")
    assert "m64n256k32.f32.e5m2.e5m2" in ck.source
    loads = [m for m in ck.tensor_maps if m["tensor"] != "C"]  # C: the TMA-store epilogue's map (128-byte swizzle)
    assert {m["swizzle"] for m in loads} == {64} and loads[0]["box"] == [64, 128]
    assert ", 16, 512, 2)" in ck.source  # rows of 64 bytes: SBO 8 rows, 64-byte swizzle


def test_e4m3_times_e5m2_is_one_wgmma():
    src = KN_SOURCE.replace("B: T.Tensor((K, N), dtype)", "B: T.Tensor((N, K), T.float8_e5m2)").replace(
        "B_s = T.alloc_shared((block_K, block_N), dtype)", "B_s = T.alloc_shared((block_N, block_K), T.float8_e5m2)"
    ).replace("B[ko * block_K, bx * block_N], B_s", "B[bx * block_N, ko * block_K], B_s").replace(
        "T.gemm(A_s, B_s, C_l)", "T.gemm(A_s, B_s, C_l, transpose_B=True)")
    ck = generate(_kernel(src, "fp8_mixed.py", "fp8_kn", M=256, N=256, K=256), "sm_90a")
    assert "wgmma.mma_async.sync.aligned.m64n128k32.f32.e4m3.e5m2" in ck.source
    assert [m["dtype"] for m in ck.tensor_maps if m["tensor"] != "C"] == ["float8_e4m3fn", "float8_e5m2"]


def test_the_ir_stages_say_what_each_fp8_gemm_lowers_to():
    k = _bench(M=512, N=512, K=256)
    stages = lower(k, "sm_90a", until="lowered").stages
    assert "wgmma m64n256k32 float8_e4m3fn x float8_e4m3fn" in stages["layouts"]
    assert "warp-specialised ko: 4 stages" in stages["layouts"] and "tl::tma_load_2d" in stages["lowered"]
    kn = _kernel(KN_SOURCE, "fp8_kn.py", "fp8_kn", M=256, N=256, K=256)
    assert "store B as N x K and pass transpose_B=True" in lower(kn, "sm_90a", until="layouts").stages["layouts"]


def test_b_given_k_by_n_and_sm80_keep_the_fma_gemm():
    kn = generate(_kernel(KN_SOURCE, "fp8_kn.py", "fp8_kn", M=256, N=256, K=256), "sm_90a")
    assert "tl::gemm_fma<" in kn.source and "wgmma.mma_async" not in kn.source
    sm80 = generate(_bench(M=512, N=512, K=256, num_stages=3), "sm_80")  # 4 stages (192 KiB) exceed sm_80's 163
    assert "tl::gemm_fma<" in sm80.source and not sm80.tensor_maps and "wgmma" not in sm80.source


def test_fp16_wgmma_descriptors_are_unchanged():
    from tilelang_core.codegen.cuda.wgmma import _operand

    assert _operand("atoms", 128, 64, 2, kmajor=True)["off"] == \
        "(kk * 32 / 128) * 16384 + row0 * 128 + (kk * 32 % 128)"
    assert _operand("rows", 128, 32, 2, kmajor=True) == {"off": "row0 * 64 + kk * 32", "lbo": 16, "sbo": 512,
                                                         "mode": 2}


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
@pytest.mark.parametrize("tile", [dict(block_N=256, threads=256), dict(block_N=128, threads=128),
                                  dict(block_N=128, threads=128, fp16=True)])
def test_fp8_wgmma_kernels_compile_for_sm90a_without_warnings(tile):
    from tests.codegen.ptxas import ptxas_report

    tile = dict(tile)
    if tile.pop("fp16", False):  # one consumer warpgroup keeps a wgmma group in flight for fp16 too
        kernel = _kernel(KERNELS.read_text(), str(KERNELS), "hopper_matmul", M=2048, N=2048, K=2048, block_K=64,
                         num_stages=4, **tile)
    else:
        kernel = _bench(M=2048, N=2048, K=2048, **tile)
    ck = generate(kernel, "sm_90a")
    assert ("tl::wgmma_wait_fenced<1, " in ck.source) == (tile["threads"] == 128)  # ptxas must not serialise it
    stderr = ptxas_report(ck.source)
    assert "warning" not in stderr.lower() and "0 bytes spill stores" in stderr


# ------------------------------------------------------------------ CPU backend numerics
def test_the_scaled_fp8_example_matches_torch_on_the_cpu(tilelang_alias):
    import runpy

    glb = runpy.run_path(str(EXAMPLES / "gemm_fp8.py"), run_name="example_gemm_fp8")
    kernel = glb["fp8_matmul"](96, 160, 192, 64, 64, 64, 2, 128)  # a K tail-free size with N, M tails
    torch.manual_seed(0)
    a, sa = glb["quantize"](torch.randn(96, 192))
    b, sb = glb["quantize"](torch.randn(160, 192) * 3)
    c = kernel(a, b, sa, sb)
    ref = (a.float() @ b.float().T) * (sa * sb)
    assert c.dtype == torch.bfloat16
    assert ((c.float() - ref).norm() / ref.norm()).item() < 4e-3  # bf16 rounding of an exact fp32 product


def test_fp8_conversions_on_the_cpu_match_torch(tilelang_alias):
    import tilelang
    import tilelang.language as T

    @tilelang.jit(out_idx=[-1])
    def convert(n, src, dst):
        @T.prim_func
        def main(X: T.Tensor((n,), src), Y: T.Tensor((n,), dst)):
            with T.Kernel(1, threads=128) as _:
                for i in T.Parallel(n):
                    Y[i] = X[i]

        return main

    # T.float8_e4m3 (TileLang's other name of e4m3) takes torch.float8_e4m3fn tensors too, as on CUDA
    for fp8, name in ((torch.float8_e4m3fn, "float8_e4m3fn"), (torch.float8_e4m3fn, "float8_e4m3"),
                      (torch.float8_e5m2, "float8_e5m2")):
        bits = torch.arange(256, dtype=torch.uint8).view(fp8)  # every code, NaN and inf included
        got = convert(256, name, "float32")(bits)
        torch.testing.assert_close(got, bits.float(), equal_nan=True, rtol=0, atol=0)
        finite = bits.float()[torch.isfinite(bits.float())]
        x = torch.cat([finite, (finite[:-1] + finite[1:]) / 2, torch.randn(1000) * 20])  # ties, between codes
        x = x[x.abs() <= (448 if fp8 == torch.float8_e4m3fn else 57344)]
        y = convert(x.numel(), "float32", name)(x)
        assert torch.equal(y.view(torch.uint8), x.to(fp8).view(torch.uint8)), name  # round to nearest even
