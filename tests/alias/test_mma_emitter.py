"""TileLang's TensorCoreIntrinEmitter under the alias: its ldmatrix / mma (or per-tile mma_atom) / stmatrix macros on
per-thread buffers compute A @ B on the CPU backend (T.ptx_mma emulated warp-wide) for fp16 and int8, transposed or
not, with shared tiles laid out by get_swizzle_layout or not, and lower to CUDA that nvcc compiles for sm_90a (one
mma.sync per 16 x 8 tile)."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

KERNELS = '''
import tilelang
import tilelang.language as T
from tilelang.cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter
from tilelang.cuda.intrinsics.layout.mma_layout import get_swizzle_layout


def swizzled(shape, dtype):
    return T.Layout(shape, lambda i, j: get_swizzle_layout(i, j, shape[-1], dtype))


def emitter_gemm(target, in_dtype, accum_dtype, a_t=False, b_t=True, rows=2, cols=1, warp_m=32, warp_n=16,
                 chunk=32, two_d=False, atom=False):
    @tilelang.jit(out_idx=[-1], target=target)
    def factory(M, N, K):
        k_step = 32 if in_dtype == "int8" else 16
        block_m, block_n = rows * warp_m, cols * warp_n
        em = TensorCoreIntrinEmitter(a_dtype=in_dtype, b_dtype=in_dtype, accum_dtype=accum_dtype, a_transposed=a_t,
                                     b_transposed=b_t, block_row_warps=rows, block_col_warps=cols,
                                     warp_row_tiles=warp_m, warp_col_tiles=warp_n, chunk=chunk)
        c_shape = (block_m, block_n) if two_d else (block_m // 16, block_n // em.micro_size_y, 16, em.micro_size_y)

        @T.prim_func
        def main(A: T.Tensor((K, M) if a_t else (M, K), in_dtype), B: T.Tensor((N, K) if b_t else (K, N), in_dtype),
                 C: T.Tensor((M, N), accum_dtype)):
            with T.Kernel(T.ceildiv(N, block_n), T.ceildiv(M, block_m), threads=32 * rows * cols) as (bx, by):
                A_s = T.alloc_shared((chunk, block_m) if a_t else (block_m, chunk), in_dtype)
                B_s = T.alloc_shared((block_n, chunk) if b_t else (chunk, block_n), in_dtype)
                C_s = T.alloc_shared(c_shape, accum_dtype)
                A_l = T.alloc_local((em.warp_rows * em.local_size_a), in_dtype)
                B_l = T.alloc_local((em.warp_cols * em.local_size_b), in_dtype)
                C_l = T.alloc_local((em.warp_rows * em.warp_cols * em.local_size_out), accum_dtype)
                if atom:
                    T.annotate_layout({A_s: swizzled(A_s.shape, in_dtype), B_s: swizzled(B_s.shape, in_dtype)})
                T.clear(C_l)
                for ko in T.serial(K // chunk):
                    if a_t:
                        T.copy(A[ko * chunk, by * block_m], A_s)
                    else:
                        T.copy(A[by * block_m, ko * chunk], A_s)
                    if b_t:
                        T.copy(B[bx * block_n, ko * chunk], B_s)
                    else:
                        T.copy(B[ko * chunk, bx * block_n], B_s)
                    for ki in T.serial(chunk // k_step):
                        em.ldmatrix_a(A_l, A_s, ki)
                        em.ldmatrix_b(B_l, B_s, ki)
                        if atom:
                            for i, j in T.grid(em.mma_num_inst_m, em.mma_num_inst_n):
                                em.mma_atom(A_l, B_l, C_l, i, j, ki)
                        else:
                            em.mma(A_l, B_l, C_l)
                em.stmatrix(C_l, C_s)
                for i, j in T.Parallel(block_m, block_n):
                    if two_d:
                        C[by * block_m + i, bx * block_n + j] = C_s[i, j]
                    else:
                        C[by * block_m + i, bx * block_n + j] = C_s[i // 16, j // em.micro_size_y, i % 16,
                                                                     j % em.micro_size_y]
        return main
    return factory
'''


@pytest.fixture(scope="module")
def mod(run_aliased):
    return run_aliased("mma_emitter_kernels", KERNELS)


def _operands(in_dtype, m, n, k, a_t, b_t):
    if in_dtype == "int8":
        a, b = torch.randint(-8, 8, (m, k), dtype=torch.int8), torch.randint(-8, 8, (k, n), dtype=torch.int8)
        ref = a.int() @ b.int()
    else:
        a, b = torch.randn(m, k).half(), torch.randn(k, n).half()
        ref = a.float() @ b.float()
    return (a.t().contiguous() if a_t else a), (b.t().contiguous() if b_t else b), ref


@pytest.mark.parametrize("in_dtype, accum, a_t, b_t, cols, warp_n, two_d, atom", [
    ("float16", "float32", False, True, 1, 16, False, False), ("float16", "float32", True, False, 2, 8, True, False),
    ("int8", "int32", False, True, 1, 16, False, False), ("float16", "float32", False, True, 1, 16, False, True)])
def test_emitter_gemm_matches_torch_on_the_cpu_backend(mod, in_dtype, accum, a_t, b_t, cols, warp_n, two_d, atom):
    m, n, k = 64, 32, 64
    a, b, ref = _operands(in_dtype, m, n, k, a_t, b_t)
    kernel = mod["emitter_gemm"]("cpu", in_dtype, accum, a_t, b_t, cols=cols, warp_n=warp_n, two_d=two_d,
                                 atom=atom)(m, n, k)
    got = kernel(a, b)
    if in_dtype == "int8":
        assert torch.equal(got, ref)
    else:
        torch.testing.assert_close(got, ref, rtol=1e-3, atol=1e-3)


def test_unsupported_emitter_configuration_names_the_feature(mod):
    from tilelang_core.compat import UnsupportedFeatureError
    from tilelang_core.compat.mma_emitter import TensorCoreIntrinEmitter

    with pytest.raises(UnsupportedFeatureError, match="TensorCoreIntrinEmitter"):
        TensorCoreIntrinEmitter(a_dtype="float64", b_dtype="float64", accum_dtype="float64")


@pytest.mark.nvcc
@pytest.mark.parametrize("in_dtype, accum, a_t, b_t, warp_n, loads, atom", [
    ("float16", "float32", False, True, 16, ("tl::ldsm_x4(",), False),
    ("float16", "float32", True, False, 8, ("tl::ldsm_x4_trans(", "tl::ldsm_x2_trans("), False),
    ("int8", "int32", False, True, 16, ("tl::ldsm_x4(",), False), ("int8", "int32", True, False, 16, (), False),
    ("float16", "float32", False, True, 16, ("tl::ldsm_x4(",), True)])
def test_emitter_gemm_compiles_for_sm90a(mod, in_dtype, accum, a_t, b_t, warp_n, loads, atom):
    kernel = mod["emitter_gemm"]("sm_90a", in_dtype, accum, a_t, b_t, warp_n=warp_n, atom=atom)(128, 128, 128)
    source = kernel.get_kernel_source()
    ptx = "mma.sync.aligned.m16n8k16.row.col.f32.f16" if in_dtype == "float16" else \
        "mma.sync.aligned.m16n8k32.row.col.s32.s8"
    assert kernel.arch == "sm_90a" and ptx in source
    assert all(load in source for load in loads)
    if not loads:  # 8-bit tiles stored (K, rows): no ldmatrix (it moves 16-bit elements), registers loaded one by one
        assert "tl::ldsm_" not in source

BAD = '''
import tilelang
import tilelang.language as T
from tilelang.cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter


def bad(dtype):
    @tilelang.jit(target="cpu")
    def kernel(A):
        N = T.const("N")
        A: T.Tensor((N,), "float32")
        B = T.empty((N,), "float32")
        em = TensorCoreIntrinEmitter(a_dtype=dtype, b_dtype=dtype, accum_dtype="float32", warp_row_tiles=16,
                                     warp_col_tiles=16)
        with T.Kernel(1, threads=128) as bx:
            C_l = T.alloc_local((8,), "float32")
            em.METHOD(C_l, B)
        return B
    return kernel
'''


@pytest.mark.parametrize("dtype, method, line, message", [
    ("float64", "stmatrix", 13, "float64 x float64, reduce_k=1, is_m_first=False) is not supported"),
    ("float16", "make_mma_load_layout", 17, "has no `make_mma_load_layout` in tilelang_core")])
def test_emitter_misuse_is_an_error_at_the_users_line(run_aliased, dtype, method, line, message):
    from tilelang_core.diagnostics import CompileError

    kernel = run_aliased(f"bad_emitter_{method}", BAD.replace("METHOD", method))["bad"]
    with pytest.raises(CompileError) as info:
        kernel(dtype)(torch.zeros(8))
    errors = [d for d in info.value.diagnostics if d.is_error]
    assert errors[0].code == "unsupported-syntax" and errors[0].span.line == line and message in errors[0].message


EAGER = '''
import tilelang
import tilelang.language as T
from tilelang.cuda.intrinsics.macro.mma_macro_generator import TensorCoreIntrinEmitter


@tilelang.jit
def eager(A, B):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), "float16")
    B: T.Tensor((N, K), "float16")
    C = T.empty((M, N), "float32")
    em = TensorCoreIntrinEmitter(a_dtype="float16", b_dtype="float16", accum_dtype="float32", b_transposed=True,
                                 block_row_warps=1, block_col_warps=1, warp_row_tiles=16, warp_col_tiles=16, chunk=16)
    with T.Kernel(T.ceildiv(N, 16), T.ceildiv(M, 16), threads=32) as (bx, by):
        A_s = T.alloc_shared((16, 16), "float16")
        B_s = T.alloc_shared((16, 16), "float16")
        C_s = T.alloc_shared((16, 16), "float32")
        A_l = T.alloc_local((8,), "float16")
        B_l = T.alloc_local((8,), "float16")
        C_l = T.alloc_local((8,), "float32")
        T.clear(C_l)
        for ko in T.serial(K // 16):
            T.copy(A[by * 16, ko * 16], A_s)
            T.copy(B[bx * 16, ko * 16], B_s)
            em.ldmatrix_a(A_l, A_s, 0)
            em.ldmatrix_b(B_l, B_s, 0)
            em.mma(A_l, B_l, C_l)
        em.stmatrix(C_l, C_s)
        T.copy(C_s, C[by * 16, bx * 16])
    return C
'''


def test_eager_emitter_kernels_pass_the_static_check_and_run_on_the_cpu(run_aliased, tmp_path):
    from tilelang_core import check_source

    path = tmp_path / "eager_emitter.py"
    path.write_text(EAGER)
    assert [d for d in check_source(EAGER, str(path)).diagnostics if d.is_error] == []
    a, b = torch.randn(32, 48).half(), torch.randn(16, 48).half()
    got = run_aliased("eager_emitter_kernels", EAGER)["eager"].compile(M=32, N=16, K=48, target="cpu")(a, b)
    torch.testing.assert_close(got, a.float() @ b.float().t(), rtol=1e-3, atol=1e-3)


def test_get_swizzle_layout_permutes_16_byte_vectors_within_each_row_group():
    import numpy as np

    from tilelang_core.language.bank_swizzle import get_swizzle_layout

    rows, cols = np.meshgrid(np.arange(16), np.arange(64), indexing="ij")  # fp16, 128-byte rows: 8 vectors of 8
    r, c = get_swizzle_layout(rows, cols, 64, "float16")
    assert (r == rows).all() and (c % 8 == cols % 8).all()
    assert (c // 8 == (cols // 8) ^ (rows % 8)).all()
    for row in range(16):  # each row's columns are a permutation
        assert sorted(c[row]) == list(range(64))
    _, c64 = get_swizzle_layout(rows[:, :32], cols[:, :32], 32, "float16")  # 64-byte rows: groups of 4 vectors
    assert (c64 // 8 == (cols[:, :32] // 8) ^ (rows[:, :32] % 8 // 2)).all()
    with pytest.raises(ValueError, match="multiple of 32 bytes"):
        get_swizzle_layout(0, 0, 8, "float16")
