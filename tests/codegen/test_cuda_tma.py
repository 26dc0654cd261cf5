"""The sm_90a TMA + mbarrier, warp-specialised T.Pipelined schedule (codegen/cuda/tma.py): when it applies, what
it emits, the tensor maps the launcher encodes, and the paths that keep cp.async (sm_80, strides TMA cannot take)."""
from __future__ import annotations

import shutil

import pytest

from tilelang_core import check_source, lower
from tilelang_core.codegen.cuda import generate
from tests.conftest import EXAMPLES, ROOT

pytestmark = pytest.mark.tvm


def _gemm(**kw):
    path = ROOT / "benchmarks" / "gpu_kernels.py"
    res = check_source(path.read_text(), str(path), instances={"bench_matmul": [kw]})
    return next(k for k in res.kernels if k.factory == "bench_matmul")


BIG = dict(M=512, N=512, K=256, block_M=128, block_N=256, block_K=64, num_stages=3, threads=256)


@pytest.fixture(scope="module")
def big():
    return generate(_gemm(**BIG), "sm_90a")


def test_a_128x256_gemm_gets_a_tma_producer_warpgroup_and_two_consumer_warpgroups(big):
    src = big.source
    assert big.block == (384, 1, 1)
    assert "__launch_bounds__(384, 1)" in src
    assert "const __grid_constant__ CUtensorMap A_tmap0" in src and "const __grid_constant__ CUtensorMap B_tmap1" in src
    # one A box, four 64-column atoms of B; once in the whole-tile loop, once in the stream-K pieces (streamk.py)
    assert src.count("tl::tma_load_2d(") == 2 * 5
    assert "tl::reg_dealloc<40>()" in src and "tl::reg_alloc<232>()" in src
    assert "tl::mbar_expect_tx" in src and "tl::mbar_arrive(" in src and "cp.async.bulk.tensor.2d" in src
    assert "tl::cp_async<" not in src.split("extern \"C\" __global__")[-1]
    # 3 stages of 128x64 + 64x256 fp16 tiles, then 6 mbarriers (full + empty per stage), to 1024 bytes, then the
    # staging tile of the TMA-store epilogue (test_cuda_persistent)
    assert big.smem_bytes == 3 * (128 * 64 + 64 * 256) * 2 + 1024 + 128 * 256 * 2


def test_tensor_maps_match_the_wgmma_128_byte_swizzle_and_the_kernel_signature(big):
    maps = {m["tensor"]: m for m in big.tensor_maps}
    assert maps["A"]["box"] == [64, 128] and maps["B"]["box"] == [64, 64]  # innermost first
    assert maps["A"]["swizzle"] == maps["B"]["swizzle"] == 128
    assert all(m["position"] >= 0 for m in big.tensor_maps)
    params = big.launches[0]["params"]  # a launch list: the stream-K workspace is the launcher's
    assert [p["position"] for p in params if p["name"] in ("A", "B")] == [-1, -1]  # read through the maps only


def test_the_ir_stages_show_the_warp_specialised_schedule():
    res = lower(_gemm(**BIG), "sm_90a", until="lowered")
    text = res.stages["lowered"]
    assert "if tx >= 256:" in text and "tl::tma_load_2d" in text and "tl::consumer_sync" not in text.split("else:")[0]
    assert "warp-specialised ko: 3 stages" in res.stages["layouts"]


def test_sm80_and_the_switch_keep_the_cp_async_pipeline(monkeypatch):
    ck = generate(_gemm(**BIG), "sm_80")
    assert ck.block == (256, 1, 1) and not ck.tensor_maps and "tl::cp_async<16>" in ck.source
    monkeypatch.setenv("TILELSP_DISABLE_TMA", "1")
    ck = generate(_gemm(**BIG), "sm_90a")
    assert ck.block == (256, 1, 1) and not ck.tensor_maps and "cp.async.bulk.tensor" not in ck.source


def test_rows_tma_cannot_address_keep_cp_async():
    """K = 100 halves: A's rows are 200 bytes apart, not a multiple of 16 (TMA's stride rule)."""
    ck = generate(_gemm(M=130, N=250, K=100, block_M=64, block_N=64, block_K=32, num_stages=3, threads=128), "sm_90a")
    assert not ck.tensor_maps and ck.block == (128, 1, 1)


def test_a_narrow_k_tile_uses_the_64_byte_swizzle():
    ck = generate(_gemm(M=200, N=136, K=72, block_M=128, block_N=128, block_K=32, num_stages=3, threads=128),
                  "sm_90a")
    maps = {m["tensor"]: m for m in ck.tensor_maps}
    assert maps["A"]["swizzle"] == 64 and maps["A"]["box"] == [32, 128]
    assert maps["B"]["swizzle"] == 128 and ck.block == (256, 1, 1)
    assert "tl::reg_alloc<" not in ck.source  # one consumer warpgroup keeps its registers


def test_flash_attention_loads_k_and_v_through_tma():
    path = EXAMPLES / "flash_attention.py"
    kw = dict(batch=1, heads=2, seq_len=256, dim=128, is_causal=True, block_M=128, block_N=64, num_stages=2,
              threads=256)
    k = next(k for k in check_source(path.read_text(), str(path), instances={"flash_attention": [kw]}).kernels)
    ck = generate(k, "sm_90a")
    assert sorted(m["tensor"] for m in ck.tensor_maps) == ["K", "O", "V"]  # O: the TMA-store epilogue
    assert ck.tensor_maps[0]["box"] == [64, 64, 1, 1] and ck.block == (384, 1, 1)
    assert "tl::tma_store_4d(O_tmap" in ck.source
    assert "tl::consumer_sync<256>()" in ck.source  # the softmax's barriers leave the producer out


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_the_warp_specialised_gemm_compiles_for_sm90a_without_warnings(big):
    from tests.codegen.ptxas import ptxas_report

    stderr = ptxas_report(big.source)
    assert "warning" not in stderr.lower() and "C7514" not in stderr and "C7508" not in stderr


def test_use_swizzle_remaps_the_block_indices():
    path = ROOT / "benchmarks" / "gpu_hopper_kernels.py"
    kw = dict(M=1000, N=1800, K=136, block_M=128, block_N=256, block_K=64, num_stages=4, threads=256, panel=3)
    k = check_source(path.read_text(), str(path), instances={"hopper_matmul": [kw]}).kernels[0]
    script = lower(k, "sm_90a", until="lowered").stages["lowered"]
    assert "blk[0] = " in script and "blk[1] = " in script and "T.min(8 - " in script  # 8 tile rows, panels of 3


def test_the_persistent_producer_computes_its_tile_coordinates_once_per_tile():
    path = ROOT / "benchmarks" / "gpu_hopper_kernels.py"
    kw = dict(M=4096, N=4096, K=4096, block_M=128, block_N=256, block_K=64, num_stages=3, threads=256, panel=8)
    src = generate(check_source(path.read_text(), str(path), instances={"hopper_matmul": [kw]}).kernels[0],
                   "sm_90a").source
    producer = src[src.index("for (int ko_i = 0;"):src.index("if (0 < sk_ptr[1])")]  # its data-parallel k-loop
    assert producer.count("tl::tma_load_2d(") == 5 and "blk_ptr[0]" in producer and "blk_ptr[1]" in producer
    assert "blockIdx" not in producer and "/" not in producer.replace("/ 3)", "")  # no division but the stage's


def test_accumulators_are_stored_two_columns_at_a_time_when_rows_are_even(monkeypatch):
    monkeypatch.setenv("TILELSP_TMA_STORE", "0")  # the register epilogue (else a TMA store: test_cuda_persistent)
    assert "*(half2*)(C_ptr + " in generate(_gemm(**BIG), "sm_90a").source  # registers 2r, 2r+1: adjacent columns
    sm80 = generate(_gemm(**BIG), "sm_80").source
    assert "*(half2*)(C_ptr + " in sm80
    odd = generate(_gemm(M=130, N=250 + 1, K=128, block_M=64, block_N=64, block_K=32, num_stages=3, threads=128),
                   "sm_90a").source
    assert "*(half2*)(C_ptr + " not in odd  # an odd row length: a pair may straddle rows or the edge
