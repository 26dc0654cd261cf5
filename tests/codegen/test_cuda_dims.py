"""Dims the real TileLang examples use, lowered for sm_90a and compiled with nvcc: names bound to dims before
`T.Kernel` (`KH = K`, `OH = (H - K) // S + 1`), `T.dynamic` dims, `T.float8_e4m3`; the same kernels run on the
CPU backend against torch."""
from __future__ import annotations

import runpy
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

KERNELS = '''
import tilelang_core as tilelang
import tilelang_core.language as T


def window_sum(target):
    @tilelang.jit(target=target)
    def kernel(X, W, S: int = 1, block: int = 8):
        M, L, K = T.const("M, L, K")
        KH, KW = K, K                     # aliases of the dim K
        OL = (L - KH) // S + 1            # a dim expression bound to a name
        X: T.Tensor((M, L), "float32")
        W: T.Tensor((KH, KW), "float32")
        Y = T.empty((M, OL), "float32")
        with T.Kernel(T.ceildiv(M, block), threads=32) as bx:
            for i, o in T.Parallel(block, OL):
                acc = T.alloc_var("float32")
                acc = 0.0
                for k in T.serial(KW):
                    acc += X[bx * block + i, o * S + k] * W[0, k]
                Y[bx * block + i, o] = acc
        return Y
    return kernel


def scale_rows(target):
    @tilelang.jit(target=target)
    def kernel(X, block: int = 16):
        M = T.dynamic("m")
        N = T.const("N")
        rows = M                          # an alias of a T.dynamic dim
        X: T.Tensor((rows, N), "float32")
        Y = T.empty((rows, N), "float32")
        with T.Kernel(T.ceildiv(rows, block), threads=64) as bx:
            tile = T.alloc_fragment((block, N), "float32")
            T.copy(X[bx * block, 0], tile)
            for i, j in T.Parallel(block, N):
                tile[i, j] = tile[i, j] * 3.0
            T.copy(tile, Y[bx * block, 0])
        return Y
    return kernel


def to_e4m3(target):
    @tilelang.jit(target=target)
    def kernel(X):
        M, N = T.const("M, N")
        X: T.Tensor((M, N), "float32")
        Y = T.empty((M, N), T.float8_e4m3)
        with T.Kernel(T.ceildiv(M, 32), threads=128) as bx:
            s = T.alloc_shared((32, N), T.float8_e4m3)
            for i, j in T.Parallel(32, N):
                s[i, j] = X[bx * 32 + i, j]
            T.copy(s, Y[bx * 32, 0])
        return Y
    return kernel


def int_ops(target):
    @tilelang.jit(out_idx=[-1], target=target)
    def factory(block: int = 4):
        nb = T.dynamic("nb")              # captured by the prim_func: one dim in shapes and body

        @T.prim_func
        def main(A: T.Tensor((nb, 8), "int32"), B: T.Tensor((nb, 8, 6), "int32")):
            with T.Kernel(T.ceildiv(nb, block), threads=32) as bx:
                for i, j in T.Parallel(block, 8):
                    r = bx * block + i
                    if r < nb:
                        B[r, j, 0] = T.floordiv(A[r, j], 3)
                        B[r, j, 1] = T.floormod(A[r, j], 3)
                        B[r, j, 2] = T.truncdiv(A[r, j], 3)
                        B[r, j, 3] = T.truncmod(A[r, j], 3)
                        B[r, j, 4] = T.bitwise_and(T.shift_right(A[r, j], 1), 7)
                        B[r, j, 5] = T.floordiv(nb, 2) + T.floormod(nb, 4)
        return main
    return factory


def padded_scale(target):
    @tilelang.jit(target=target)
    def kernel(X, heads: int = 48):
        M = T.const("M")
        X: T.Tensor((M,), "float32")
        padded = max(tilelang.math.next_power_of_2(heads), 16)   # folds to 64: the `if` is trace time
        if padded != heads:
            assert heads % 16 == 0, "checked while tracing"
        Y = T.empty((M,), "float32")
        with T.Kernel(tilelang.cdiv(M, 32), threads=32) as bx:
            for i in T.Parallel(32):
                Y[bx * 32 + i] = X[bx * 32 + i] * padded + tilelang.cdiv(heads, 32)
        return Y
    return kernel


def mixed_gemms(target):
    @tilelang.jit(out_idx=[-1], target=target)
    def factory():
        @T.prim_func
        def main(Q: T.Tensor((64, 64), T.float16), K: T.Tensor((32, 64), T.float16),
                 V: T.Tensor((32, 512), T.float16), O: T.Tensor((64, 512), T.float32)):
            with T.Kernel(1, threads=128) as bx:
                Qs = T.alloc_shared((64, 64), T.float16)
                Ks = T.alloc_shared((32, 64), T.float16)
                Vs = T.alloc_shared((32, 512), T.float16)
                P = T.alloc_shared((64, 32), T.float16)
                S = T.alloc_fragment((64, 32), T.float32)        # fits wgmma
                acc = T.alloc_fragment((64, 512), T.float32)     # too wide for one wgmma
                m = T.alloc_fragment((64,), T.float32)           # rows of both
                T.copy(Q, Qs)
                T.copy(K, Ks)
                T.copy(V, Vs)
                T.clear(S)
                T.clear(acc)
                T.gemm(Qs, Ks, S, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.reduce_max(S, m, dim=1)
                for i, j in T.Parallel(64, 32):
                    S[i, j] = S[i, j] - m[i]
                T.copy(S, P)
                T.gemm(P, Vs, acc, policy=T.GemmWarpPolicy.FullRow)
                for i, j in T.Parallel(64, 512):
                    acc[i, j] = acc[i, j] + m[i]
                T.copy(acc, O)
        return main
    return factory


def row_driven(target):
    @tilelang.jit(out_idx=[-1], target=target)
    def factory():
        @T.prim_func
        def main(A: T.Tensor((64, 32), T.float16), B: T.Tensor((32, 64), T.float16),
                 X: T.Tensor((64, 50), T.float32), O: T.Tensor((64, 50), T.float32)):
            with T.Kernel(1, threads=128) as bx:
                As = T.alloc_shared((64, 32), T.float16)
                Bs = T.alloc_shared((32, 64), T.float16)
                Xs = T.alloc_shared((64, 50), T.float32)
                acc = T.alloc_fragment((64, 64), T.float32)
                m = T.alloc_fragment((64,), T.float32)
                T.copy(A, As)
                T.copy(B, Bs)
                T.copy(X, Xs)
                T.gemm(As, Bs, acc, clear_accum=True)
                T.reduce_max(acc, m, dim=1)
                for h, k in T.Parallel(64, 50):   # m's rows drive h; each (h, k) updates Xs once
                    Xs[h, k] = (Xs[h, k] - m[h]) * 2.0
                T.copy(Xs, O)
        return main
    return factory


def shifted_rows(target):
    @tilelang.jit(out_idx=[-1], target=target)
    def factory():
        S, B = T.dynamic("S, B")          # two dims from one T.dynamic

        @T.prim_func
        def main(A: T.Tensor((64, 32), T.float16), Bm: T.Tensor((32, 64), T.float16),
                 X: T.Tensor((S, B), T.float32), O: T.Tensor((64, 64), T.float32)):
            with T.Kernel(1, threads=128) as bx:
                As = T.alloc_shared((64, 32), T.float16)
                Bs = T.alloc_shared((32, 64), T.float16)
                half = T.alloc_shared((32, 64), T.float32)
                acc = T.alloc_fragment((64, 64), T.float32)
                T.copy(A, As)
                T.copy(Bm, Bs)
                T.gemm(As, Bs, acc, clear_accum=True)
                for h in range(2):                  # a run-time loop: row offset h * 32
                    for i, j in T.Parallel(64, 64):
                        if i < 32:
                            half[i, j] = acc[i + h * 32, j] + X[0, 0] * 0
                    T.copy(half, O[h * 32, 0])
        return main
    return factory

'''


TWO_KERNELS = '''
import tilelang_core.language as T

@T.prim_func
def k(A: T.Tensor((64,), T.float32), B: T.Tensor((64,), T.float32)):
    W = T.alloc_global((64,), T.float32)
    with T.Kernel(2, threads=32) as bx:
        for i in T.Parallel(32):
            B[bx * 32 + i] = A[bx * 32 + i] * 2
    with T.Kernel(2, threads=32) as bx:
        for i in T.Parallel(32):
            B[bx * 32 + i] = B[bx * 32 + i] + 1
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("dims") / "dim_kernels.py"
    path.write_text(textwrap.dedent(KERNELS))
    return runpy.run_path(str(path), run_name="dim_kernels")


@pytest.mark.nvcc
@pytest.mark.parametrize("name, dims", [("window_sum", dict(M=16, L=40, K=3)),
                                        ("scale_rows", dict(m=64, N=32)),
                                        ("to_e4m3", dict(M=64, N=64)),
                                        ("padded_scale", dict(M=64))])
def test_dim_kernels_compile_for_sm90a(mod, name, dims):
    kernel = mod[name]("sm_90a").compile(**dims)
    assert kernel.arch == "sm_90a" and "__global__" in kernel.get_kernel_source()


def test_dim_aliases_run_on_the_cpu_backend(mod):
    x, w = torch.randn(16, 40), torch.randn(3, 3)
    y = mod["window_sum"]("cpu")(x, w, S=2)
    ref = torch.stack([(x[:, o * 2:o * 2 + 3] * w[0]).sum(1) for o in range((40 - 3) // 2 + 1)], 1)
    torch.testing.assert_close(y, ref)
    x = torch.randn(48, 32)
    torch.testing.assert_close(mod["scale_rows"]("cpu")(x), x * 3.0)
    x = torch.randn(64)
    torch.testing.assert_close(mod["padded_scale"]("cpu")(x), x * 64 + 2)


@pytest.mark.nvcc
def test_integer_intrinsics_and_a_captured_dynamic_dim_compile_for_sm90a(mod):
    kernel = mod["int_ops"]("sm_90a")(block=4)
    assert kernel.arch == "sm_90a" and [p.name for p in kernel.params][:2] == ["A", "B"]


def test_integer_intrinsics_run_on_the_cpu_backend(mod):
    a = torch.arange(-20, 20, dtype=torch.int32).reshape(5, 8)
    b = mod["int_ops"]("cpu")(block=4)(a)
    trunc = torch.div(a, 3, rounding_mode="trunc")
    ref = torch.stack([a // 3, a % 3, trunc, a - trunc * 3, (a >> 1) & 7, torch.full_like(a, 5 // 2 + 5 % 4)], -1)
    torch.testing.assert_close(b, ref)


def test_tvmscript_emits_one_kernel_at_a_time():
    """`generate` splits a prim_func with two T.Kernel blocks first (test_cuda_multi_kernel.py); the emitter
    itself refuses the unsplit function at the second block."""
    from tilelang_core import check_source
    from tilelang_core.codegen.cuda import tvmscript
    from tilelang_core.codegen.cuda.common import LoweringError

    func = check_source(textwrap.dedent(TWO_KERNELS), "<test>").kernels[0]
    with pytest.raises(LoweringError) as info:
        tvmscript(func, "sm_90a")
    assert info.value.span.line == 10 and "2 `with T.Kernel" in str(info.value)


RESHAPED = '''
import tilelang_core.language as T

@T.prim_func
def k(A: T.Tensor((64, 64), T.float32), B: T.Tensor((64, 64), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        s = T.alloc_fragment((64, 64), T.float32)
        T.copy(A, s)
        s3 = T.view(s, (64, 128), T.float16)
        for i, j in T.Parallel(64, 128):
            s3[i, j] = s3[i, j] * 2
        T.copy(s, B)
'''


def test_a_fragment_view_in_another_dtype_is_reported_at_its_line():
    from tilelang_core import check_source
    from tilelang_core.codegen.cuda import tvmscript
    from tilelang_core.codegen.cuda.common import LoweringError

    func = check_source(textwrap.dedent(RESHAPED), "<test>").kernels[0]
    with pytest.raises(LoweringError) as info:
        tvmscript(func, "sm_90a")
    assert info.value.span.line == 9 and "fragment view 's3' of 's'" in str(info.value) and "same dtype" in str(info.value)


VIEWS = '''
import tilelang_core.language as T

@T.prim_func
def k(A: T.Tensor((8, 64), T.float32), B: T.Tensor((8, 64), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        A_flat = T.Tensor((512,), T.float32, A.data)
        s = T.alloc_shared((8, 64), T.float32)
        s_flat = T.reshape(s, (512,))
        s_half = T.view(s, (8, 128), T.float16)
        for i in T.Parallel(512):
            s_flat[i] = A_flat[i] * 2
        for i, j in T.Parallel(8, 64):
            B[i, j] = s[i, j] + T.cast(s_half[i, 2 * j + 1], T.float32)
'''


@pytest.mark.nvcc
def test_views_of_tensors_and_shared_tiles_alias_their_storage_for_sm90a():
    from tilelang_core import check_source
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(check_source(textwrap.dedent(VIEWS), "<test>").kernels[0], "sm_90a")
    assert "data=A.data" in ck.tvmscript and ck.tvmscript.count("data=smem.data") == 3
    assert "elem_offset=0" in ck.tvmscript and ck.smem_bytes == 8 * 64 * 4
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


@pytest.mark.nvcc
def test_wgmma_and_mma_gemms_sharing_rows_fall_back_to_mma_for_sm90a(mod):
    kernel = mod["mixed_gemms"]("sm_90a")()
    assert "mma.sync" in kernel.get_kernel_source() or "mma_sync" in kernel.get_kernel_source()


def test_gemms_sharing_rows_run_on_the_cpu_backend(mod):
    q, k, v = (torch.randn(*s).half() for s in ((64, 64), (32, 64), (32, 512)))
    s = q.float() @ k.float().T
    m = s.max(1, keepdim=True).values
    ref = (s - m).half().float() @ v.float() + m
    torch.testing.assert_close(mod["mixed_gemms"]("cpu")()(q, k, v), ref, rtol=1e-2, atol=1e-2)


@pytest.mark.nvcc
def test_row_vector_driven_parallel_loop_compiles_for_sm90a(mod):
    kernel = mod["row_driven"]("sm_90a")()
    assert "__global__" in kernel.get_kernel_source()


def test_row_vector_driven_parallel_loop_runs_on_the_cpu_backend(mod):
    a, b, x = torch.randn(64, 32).half(), torch.randn(32, 64).half(), torch.randn(64, 50)
    m = (a.float() @ b.float()).max(1, keepdim=True).values
    torch.testing.assert_close(mod["row_driven"]("cpu")()(a, b, x), (x - m) * 2, rtol=1e-3, atol=1e-3)


@pytest.mark.nvcc
def test_fragment_rows_at_an_offset_drive_the_loop_for_sm90a(mod):
    kernel = mod["shifted_rows"]("sm_90a")()
    assert [p.name for p in kernel.params][:4] == ["A", "Bm", "X", "O"]


def test_fragment_rows_at_an_offset_run_on_the_cpu_backend(mod):
    a, b = torch.randn(64, 32).half(), torch.randn(32, 64).half()
    out = mod["shifted_rows"]("cpu")()(a, b, torch.zeros(3, 5))
    torch.testing.assert_close(out, a.float() @ b.float(), rtol=1e-3, atol=1e-3)


SCRATCH_VIEW = '''
import tilelang_core.language as T

@T.prim_func
def k(A: T.Tensor((64, 64), T.float16), B: T.Tensor((64, 64), T.float16), C: T.Tensor((32, 64), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        As = T.alloc_shared((64, 64), T.float16)
        Bs = T.alloc_shared((64, 64), T.float16)
        acc = T.alloc_fragment((64, 64), T.float32)
        scratch = T.view(As, shape=[32, 64], dtype=T.float32)   # the gemm tile's bytes, reused
        T.copy(A, As)
        T.copy(B, Bs)
        T.gemm(As, Bs, acc, clear_accum=True)
        for i, j in T.Parallel(64, 64):
            if i < 32:
                scratch[i, j] = acc[i, j]
        T.copy(scratch, C)
'''


@pytest.mark.nvcc
def test_another_dtype_view_of_a_swizzled_gemm_tile_is_scratch_for_sm90a():
    from tilelang_core import check_source
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(check_source(textwrap.dedent(SCRATCH_VIEW), "<test>").kernels[0], "sm_90a")
    assert 'scratch = T.decl_buffer((32, 64), "float32", data=smem.data' in ck.tvmscript
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


BF16_CLAMP = '''
import tilelang_core.language as T

@T.prim_func
def k(A: T.Tensor((128,), T.bfloat16), B: T.Tensor((128,), T.bfloat16)):
    with T.Kernel(1, threads=128) as bx:
        for i in T.Parallel(128):
            B[i] = T.clamp(A[i], -448.0, 448.0)
'''


@pytest.mark.nvcc
def test_a_bfloat16_clamp_keeps_nan_through_a_float32_test_for_sm90a():
    from tilelang_core import check_source
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(check_source(textwrap.dedent(BF16_CLAMP), "<test>").kernels[0], "sm_90a")
    assert 'T.isnan(T.Cast("float32"' in ck.tvmscript
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"
