"""What the CUDA lowering emits: tensor cores, cp.async pipelines, shared-memory plan, launch data, errors."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source, lower
from tilelang_core.diagnostics import CompileError
from tests.conftest import EXAMPLES

pytestmark = pytest.mark.tvm


def _kernel(name: str, idx: int = 0):
    path = EXAMPLES / name
    return check_source(path.read_text(), str(path)).kernels[idx]


@pytest.fixture(scope="module")
def gemm():
    return lower(_kernel("gemm.py"), "sm_80")


def test_gemm_uses_tensor_cores_and_a_three_stage_cp_async_pipeline(gemm):
    src = gemm.source
    assert "__global__" in src and "gemm_kernel" in src
    assert "tl::gemm_ss<128, 128, 32, 2, 2, false, false, true, true>" in src
    assert "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32" in src and "ldmatrix.sync.aligned" in src
    assert "tl::cp_async<16>" in src and "tl::cp_async_wait<1>()" in src
    # 3 stages of a 128x32 and a 32x128 fp16 tile
    assert gemm.smem_bytes == 3 * (128 * 32 + 32 * 128) * 2
    assert gemm.launch == {"grid": (2, 2), "block": (128, 1, 1), "dynamic_smem": 49152}


def test_gemm_stage_texts_and_line_map(gemm):
    assert list(gemm.stages) == ["parsed", "legalized", "pipelined", "layouts", "lowered", "tir", "cuda"]
    assert "mma.m16n8 128x128 warps 2x2 (128 regs/thread)" in gemm.stages["layouts"]
    lines = gemm.source.split("\n")
    gemm_line = dict(gemm.line_map)[27]  # `T.gemm(A_shared, B_shared, C_local)` in examples/gemm.py
    assert any("tl::gemm_ss" in lines[n - 1] for n in gemm_line)


def test_flash_attention_registers_operand_and_quad_reductions():
    res = lower(_kernel("flash_attention.py"), "sm_80")
    assert "tl::gemm_rs<64, 64, 64, 4, 1, false, true>" in res.source
    assert "tl::quad_max" in res.source and "tl::quad_sum" in res.source
    assert [p["name"] for p in res.params] == ["Q", "K", "V", "O"]
    assert [p["is_output"] for p in res.params] == [False, False, False, True]


def test_sm90a_gemm_uses_wgmma_with_descriptors():
    res = lower(_kernel("gemm.py"), "sm_90a")
    assert "wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16" in res.source
    assert "tl::wg_desc(" in res.source and "fence.proxy.async.shared::cta" in res.source
    assert "wgmma.m64n128 128x128 warps 4x1" in res.stages["layouts"]
    assert "B_shared: shared tile, wgmma 128-byte-swizzled atoms" in res.stages["layouts"]


def test_wgmma_descriptors_are_built_once_per_gemm_and_offset_per_instruction():
    """Each gemm builds one descriptor per operand and adds every instruction's byte offset in 16-byte units; the
    warpgroup index comes from a warp shuffle, so ptxas keeps both descriptors in uniform registers."""
    src = lower(_kernel("gemm.py"), "sm_90a").source
    fn = src[src.index("__device__ __forceinline__ void tl_gemm_wgmma_0("):]
    fn = fn[:fn.index("\n}\n")]
    assert fn.count("tl::wg_desc(") == 2 and "const unsigned long long db0 = tl::wg_desc(B, " in fn
    assert "const unsigned long long da0 = tl::wg_desc(A, " in fn
    assert "unsigned long long db = db0 + ((" in fn and "unsigned long long da = da0 + ((" in fn and ") >> 4);" in fn
    assert "const int wg = __shfl_sync(0xffffffffu, threadIdx.x / 128 % " in fn
    loop = fn[fn.index("for (int kk"):]
    assert "wg_desc" not in loop


def test_a_descriptor_plus_an_offset_is_the_descriptor_of_the_offset_address():
    """wg_desc's fields, evaluated in Python: the start address (bits 0-13, in 16-byte units) is the only field an
    offset changes, and shared addresses below 2^18 never carry into the leading-byte-offset field."""
    def wg_desc(addr, lbo, sbo, mode):
        return ((addr & 0x3FFFF) >> 4) | (((lbo >> 4) & 0x3FFF) << 16) | (((sbo >> 4) & 0x3FFF) << 32) | (mode << 62)

    for base in (0, 1024, 0x24400, 0x37C00):
        for off in (0, 32, 96, 2048, 16384 + 64 * 128 + 96, 0x8000):
            if base + off < 232448:  # the sm_90a shared-memory window
                assert wg_desc(base, 16, 1024, 1) + (off >> 4) == wg_desc(base + off, 16, 1024, 1)


def test_wgmma_can_be_disabled(monkeypatch):
    monkeypatch.setenv("TILELSP_DISABLE_WGMMA", "1")
    res = lower(_kernel("gemm.py"), "sm_90a")
    assert "wgmma.mma_async" not in res.source and "tl::gemm_ss<" in res.source


def test_bf16_gemm_uses_the_bf16_mma():
    res = lower(_kernel("gemm_bf16.py"), "sm_80")
    assert "__nv_bfloat16" in res.source and "tl::gemm_ss<" in res.source


UNSUPPORTED = textwrap.dedent('''
    import tilelang.language as T

    def scan(N=128):
        @T.prim_func
        def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
            with T.Kernel(1, threads=128) as bx:
                S = T.alloc_reducer((1,), "float32", replication="all")  # combined once per thread: refused
                T.clear(S)
                for i in T.serial(N): S[0] += A[i]  # noqa: E701
                T.finalize_reducer(S)
                B[0] = S[0]

        return main

    scan()
''')


def test_unsupported_construct_is_a_diagnostic_at_the_users_line():
    res = check_source(UNSUPPORTED, "scan.py")
    assert not res.errors, res.errors
    with pytest.raises(CompileError) as info:
        lower(res.kernels[0], "sm_90a")
    d = info.value.diagnostics[0]
    assert d.code == "lowering-unsupported"
    assert d.span.line == 10 and "outside a T.Parallel loop" in d.message


def test_until_stops_early():
    res = lower(_kernel("softmax.py"), "sm_86", until="layouts")
    assert list(res.stages) == ["parsed", "legalized", "pipelined", "layouts"] and res.source == ""


DYNAMIC = textwrap.dedent('''
    import tilelang
    import tilelang.language as T

    @tilelang.jit(out_idx=[-1])
    def dyn(N=128, K=64):
        M = T.dynamic("M")

        @T.prim_func
        def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
            with T.Kernel(T.ceildiv(N, 64), T.ceildiv(M, 64), threads=128) as (bx, by):
                A_s = T.alloc_shared((64, 32), T.float16)
                B_s = T.alloc_shared((32, 64), T.float16)
                C_l = T.alloc_fragment((64, 64), T.float32)
                T.clear(C_l)
                for k in T.Pipelined(T.ceildiv(K, 32), num_stages=2):
                    T.copy(A[by * 64, k * 32], A_s)
                    T.copy(B[k * 32, bx * 64], B_s)
                    T.gemm(A_s, B_s, C_l)
                T.copy(C_l, C[by * 64, bx * 64])

        return main

    dyn()
''')


def test_dynamic_dims_become_int32_kernel_arguments():
    res = check_source(DYNAMIC, "dyn.py")
    assert not res.errors, res.errors
    low = lower(res.kernels[0], "sm_80")
    assert low.launch["grid"] == (2, "T.ceildiv(M, 64)")
    dims = [p for p in low.params if p["kind"] == "dim"]
    assert [(p["name"], p["dtype"]) for p in dims] == [("M", "int32")] and dims[0]["position"] >= 0
    assert "int M" in low.source
