"""Gemm operands in registers under any warp policy: the A fragment follows the warp grid of the gemm (each
warp holds the A rows of its M slice, replicated over the warps that split N); lowered for sm_90a, compiled
with nvcc, and run on the CPU backend against torch."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source, lower

pytestmark = [pytest.mark.tvm]

CHAIN = """
import tilelang.language as T

def chain(M, N, K, D, policy):
    @T.prim_func
    def k(Q: T.Tensor((M, K), "float16"), Kt: T.Tensor((N, K), "float16"), V: T.Tensor((N, D), "float16"),
          O: T.Tensor((M, D), "float32"), R: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            Q_s = T.alloc_shared((M, K), "float16")
            K_s = T.alloc_shared((N, K), "float16")
            V_s = T.alloc_shared((N, D), "float16")
            S_s = T.alloc_shared((M, N), "float16")
            S = T.alloc_fragment((M, N), "float32")
            P = T.alloc_fragment((M, N), "float16")
            rows = T.alloc_fragment((M,), "float32")
            acc = T.alloc_fragment((M, D), "float32")
            T.copy(Q, Q_s)
            T.copy(Kt, K_s)
            T.copy(V, V_s)
            T.gemm(Q_s, K_s, S, transpose_B=True, clear_accum=True, policy=policy)
            T.copy(S, S_s)
            T.copy(S_s, P)
            for i, j in T.Parallel(M, N):
                P[i, j] = P[i, j] * 0.5
            T.reduce_sum(P, rows, dim=1)
            T.gemm(P, V_s, acc, clear_accum=True, policy=policy)
            T.copy(acc, O)
            T.copy(rows, R)
    return k

full_col = chain(64, 64, 32, 64, T.GemmWarpPolicy.FullCol)
square = chain(64, 64, 32, 64, T.GemmWarpPolicy.Square)
"""


def _kernels():
    res = check_source(textwrap.dedent(CHAIN), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels


@pytest.mark.nvcc
@pytest.mark.parametrize("idx,grid", [(0, (1, 4)), (1, (2, 2))])
def test_register_a_follows_the_warp_grid_and_compiles_for_sm90a(monkeypatch, idx, grid):
    from tilelang_core.runtime.artifact import compile_cubin

    monkeypatch.setenv("TILELSP_DISABLE_WGMMA", "1")
    res = lower(_kernels()[idx], "sm_90a")
    wm, wn = grid
    assert f"tl::gemm_rs<64, 64, 64, {wm}, {wn}, false, " in res.source
    assert f"P: mma.m16n8 64x64 warps {wm}x1, replicated over {wn} warps" in res.stages["layouts"]
    assert compile_cubin(res.source, "sm_90a")[:4] == b"\x7fELF"


def test_register_a_chain_matches_torch_on_the_cpu_backend():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    mod = cpu.build(_kernels()[0])
    q, kt, v = (torch.randn(64, 32).half(), torch.randn(64, 32).half(), torch.randn(64, 64).half())
    o, r = torch.zeros(64, 64), torch.zeros(64)
    mod(q, kt, v, o, r)
    p = ((q.float() @ kt.float().T).half() * 0.5).half()
    torch.testing.assert_close(o, p.float() @ v.float(), rtol=2e-2, atol=2e-2)
    torch.testing.assert_close(r, p.float().sum(1), rtol=2e-2, atol=2e-2)


TRANSPOSED = """
import tilelang.language as T

@T.prim_func
def k(X: T.Tensor((64, 32), "float32"), V: T.Tensor((64, 64), "float16"), O: T.Tensor((32, 64), "float32")):
    with T.Kernel(1, threads=128) as bx:
        X_s = T.alloc_shared((64, 32), "float32")
        V_s = T.alloc_shared((64, 64), "float16")
        P = T.alloc_fragment((64, 32), "float16")
        acc = T.alloc_fragment((32, 64), "float32")
        T.copy(X, X_s)
        T.copy(V, V_s)
        T.copy(X_s, P)
        for i, j in T.Parallel(64, 32):
            P[i, j] = P[i, j] + i
        T.gemm(P, V_s, acc, transpose_A=True, clear_accum=True)
        T.copy(acc, O)
"""


def _transposed():
    res = check_source(textwrap.dedent(TRANSPOSED), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


@pytest.mark.nvcc
def test_transposed_register_a_is_the_transposed_mma_layout_and_compiles_for_sm90a():
    from tilelang_core.runtime.artifact import compile_cubin

    res = lower(_transposed(), "sm_90a")
    assert "tl::gemm_rs<32, 64, 64, " in res.source
    assert "P: mma.m16n8 32x64 warps" in res.stages["layouts"] and "stored transposed" in res.stages["layouts"]
    assert compile_cubin(res.source, "sm_90a")[:4] == b"\x7fELF"


def test_transposed_register_a_matches_torch_on_the_cpu_backend():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    x, v, o = torch.randn(64, 32), torch.randn(64, 64).half(), torch.zeros(32, 64)
    cpu.build(_transposed())(x, v, o)
    p = (x.half() + torch.arange(64).half()[:, None]).float()
    torch.testing.assert_close(o, p.T @ v.float(), rtol=2e-2, atol=5e-2)


VIEW = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((64, 32), "float16"), B: T.Tensor((128, 32), "float16"), W: T.Tensor((4, 32), "float32"),
      L: T.Tensor((64, 4), "float32")):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 32), "float16")
        B_s = T.alloc_shared((128, 32), "float16")
        s = T.alloc_fragment((64, 128), "float32")
        s_r = T.reshape(s, (64, 4, 32))
        w = T.alloc_fragment((4, 32), "float32")
        logits = T.alloc_fragment((64, 4), "float32")
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.copy(W, w)
        T.gemm(A_s, B_s, s, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.FullCol)
        for i, q, h in T.Parallel(64, 4, 32):
            s_r[i, q, h] = T.max(s_r[i, q, h], 0) * w[q, h]
        T.reduce_sum(s_r, logits, dim=-1, clear=True)
        for i, q in T.Parallel(64, 4):
            L[i, q] = logits[i, q]
"""


def _view():
    res = check_source(textwrap.dedent(VIEW), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


@pytest.mark.nvcc
def test_fragment_view_shares_the_registers_of_its_base_and_compiles_for_sm90a(monkeypatch):
    from tilelang_core.runtime.artifact import compile_cubin

    monkeypatch.setenv("TILELSP_DISABLE_WGMMA", "1")
    res = lower(_view(), "sm_90a")
    assert "s_r: view 64x4x32 of mma.m16n8 64x128 warps 1x4" in res.stages["layouts"]
    assert "s_r" not in res.source.split("extern \"C\"")[-1]  # the view is the base's register array
    assert compile_cubin(res.source, "sm_90a")[:4] == b"\x7fELF"


def test_fragment_view_matches_torch_on_the_cpu_backend():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a, b, w, out = torch.randn(64, 32).half(), torch.randn(128, 32).half(), torch.randn(4, 32), torch.zeros(64, 4)
    cpu.build(_view())(a, b, w, out)
    s = (a.float() @ b.float().T).clamp(min=0).reshape(64, 4, 32)
    torch.testing.assert_close(out, (s * w).sum(-1), rtol=1e-3, atol=1e-3)


FP8_TAIL = """
import tilelang.language as T

n = T.dynamic("n")

@T.prim_func
def k(A: T.Tensor((n, 64), "float8_e4m3fn"), B: T.Tensor((n, 64), "float32")):
    with T.Kernel(T.ceildiv(n, 64), threads=128) as bx:
        A_s = T.alloc_shared((64, 64), "float8_e4m3fn")
        T.copy(A[bx * 64, 0], A_s)
        for i, j in T.Parallel(64, 64):
            if bx * 64 + i < n:
                B[bx * 64 + i, j] = A_s[i, j]
"""


@pytest.mark.nvcc
def test_fp8_tile_copy_with_a_bounds_check_zero_fills_lane_by_lane_and_compiles_for_sm90a():
    from tilelang_core.runtime.artifact import compile_cubin

    res = check_source(textwrap.dedent(FP8_TAIL), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    out = lower(res.kernels[0], "sm_90a")  # TVM has no 16-lane fp8 constant: the zero fill is per lane
    assert compile_cubin(out.source, "sm_90a")[:4] == b"\x7fELF"


INT8_RS = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((64, 32), "int8"), B: T.Tensor((64, 32), "int8"), C: T.Tensor((64, 64), "int32")):
    with T.Kernel(1, threads=128) as bx:
        B_s = T.alloc_shared((64, 32), "int8")
        a = T.alloc_fragment((64, 32), "int8")
        c = T.alloc_fragment((64, 64), "int32")
        T.copy(A, a)
        T.copy(B, B_s)
        for i, j in T.Parallel(64, 32):
            a[i, j] = a[i, j] - 1
        T.gemm(a, B_s, c, transpose_B=True, clear_accum=True, policy=T.GemmWarpPolicy.Square)
        T.copy(c, C)
"""


def _int8_rs():
    res = check_source(textwrap.dedent(INT8_RS), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


@pytest.mark.nvcc
def test_int8_register_a_uses_the_shuffling_fma_gemm_and_compiles_for_sm90a():
    from tilelang_core.runtime.artifact import compile_cubin

    res = lower(_int8_rs(), "sm_90a")
    assert "tl::gemm_rs_fma<64, 64, 32, 2, 2, true>" in res.source
    assert compile_cubin(res.source, "sm_90a")[:4] == b"\x7fELF"


def test_int8_register_a_matches_torch_on_the_cpu_backend():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a, b = torch.randint(-100, 100, (64, 32), dtype=torch.int8), torch.randint(-100, 100, (64, 32), dtype=torch.int8)
    c = torch.zeros(64, 64, dtype=torch.int32)
    cpu.build(_int8_rs())(a, b, c)
    torch.testing.assert_close(c, (a.int() - 1) @ b.int().T)
