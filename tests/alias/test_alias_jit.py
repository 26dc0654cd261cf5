"""JIT entry points TileLang examples call under the alias: `out_idx` as an int, `factory.compile(...)`,
`get_kernel_source` on jit factories and on eager kernels (with tensors or with dims), `get_tir` + tools.Analyzer."""
from __future__ import annotations

import runpy

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm
T_FLOAT32 = "float32"

KERNELS = '''
import tilelang
import tilelang.language as T
from tilelang.carver.arch import driver
from tvm import DataType


def add_one(N, block=16):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
            for i in T.Parallel(block):
                B[bx * block + i] = A[bx * block + i] + 1.0
    return main


factory = tilelang.jit(out_idx=-1, target="cpu")(add_one)


@tilelang.jit(target="cpu")
def add_sm_count(X):
    N = T.const("N")
    X: T.Tensor((N,), "float32")
    Y = T.empty((N,), "float32")
    sm_num = driver.get_num_sms()
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(N):
            Y[i] = X[i] + sm_num
    return Y


@tilelang.jit(target="cpu")
def eager_neg(X, block: int = 8):
    N = T.const("N")
    X: T.Tensor((N,), "float32")
    Y = T.empty((N,), "float32")
    with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
        for i in T.Parallel(block):
            Y[bx * block + i] = -X[bx * block + i]
    return Y


@tilelang.jit(target="cpu")
def lanes_per_16_bytes(X, dtype: T.dtype = T.float16):
    N = T.const("N")
    lanes = 128 // DataType(dtype).bits
    X: T.Tensor((N,), dtype)
    Y = T.empty((N,), "float32")
    with T.Kernel(1, threads=32) as bx:
        for i in T.Parallel(N):
            Y[i] = T.cast(X[i], "float32") * lanes
    return Y


@tilelang.jit
def gemm_tn(A, B, block_M=None, block_N=None, block_K=None, stages=None):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((N, K), T.float16)
    C = T.empty((M, N), T.float16)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_s = T.alloc_shared((block_M, block_K), T.float16)
        B_s = T.alloc_shared((block_N, block_K), T.float16)
        C_l = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_l)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
            T.copy(A[by * block_M, k * block_K], A_s)
            T.copy(B[bx * block_N, k * block_K], B_s)
            T.gemm(A_s, B_s, C_l, transpose_B=True)
        T.copy(C_l, C[by * block_M, bx * block_N])
    return C
'''


@pytest.fixture(scope="module")
def mod(run_aliased):
    return run_aliased("alias_jit_kernels", KERNELS)


def test_compile_with_an_int_out_idx(mod):
    import tilelang

    kernel = tilelang.compile(mod["add_one"](32), out_idx=-1, target="cpu")
    a = torch.randn(32)
    torch.testing.assert_close(kernel(a), a + 1)
    assert kernel.out_idx == (1,)


def test_factory_compile_and_source(mod):
    factory = mod["factory"]
    assert factory.compile(32) is factory(32)
    assert "define" in factory.get_kernel_source(32)
    a = torch.randn(32)
    torch.testing.assert_close(factory(32)(a), a + 1)


def test_eager_kernel_source_from_tensors_or_dims(mod):
    eager = mod["eager_neg"]
    x = torch.randn(16)
    assert "define" in eager.get_kernel_source(x)
    assert eager.get_kernel_source(N=16, block=4)
    torch.testing.assert_close(eager(x), -x)


def test_eager_get_tir_gives_the_instance_without_building(mod):
    from tilelang_core.ir import nodes as N

    func = mod["eager_neg"].get_tir(N=16, block=4)
    shape = [p.shape for p in func.params if isinstance(p, N.Buffer)][0]
    assert isinstance(func, N.PrimFunc) and [d.value for d in shape] == [16]


def test_analyzer_counts_gemm_flops_and_global_bytes_over_the_grid(mod):
    from tilelang.carver.arch import CUDA
    from tilelang.tools import Analyzer

    func = mod["gemm_tn"].get_tir(M=256, N=512, K=1024, block_M=128, block_N=128, block_K=32, stages=2)
    result = Analyzer.analysis(func, CUDA("cuda -arch=sm_80"))
    assert result.total_flops == 2 * 256 * 512 * 1024
    # A and B tiles per k step per block, and C once per block (fp16)
    assert result.total_global_bytes == 8 * (32 * (128 * 32 * 2 * 2) + 128 * 128 * 2)
    assert result.expected_tflops == 39.0 and result.expected_bandwidth_GBps == 12.08
    assert result.estimated_time == max(result.total_global_bytes / 12.08e9, result.total_flops / 39e12)


def test_tvm_datatype_bits_is_a_compile_time_value_in_a_kernel(mod):
    x = torch.ones(8, dtype=torch.float16)
    torch.testing.assert_close(mod["lanes_per_16_bytes"](x), torch.full((8,), 8.0))
    torch.testing.assert_close(mod["lanes_per_16_bytes"](torch.ones(4), dtype=T_FLOAT32), torch.full((4,), 4.0))


def test_eager_kernel_body_calls_a_device_query(mod):
    from tilelang_core.compat import driver

    x = torch.zeros(8)
    torch.testing.assert_close(mod["add_sm_count"](x), x + driver.get_num_sms())


def test_printing_a_prim_func_does_not_dump_its_globals(mod):
    text = repr(mod["add_one"](32))
    assert "main" in text and "__builtins__" not in text and len(text) < 400


EMITTER = '''
import tilelang
import tilelang.language as T
from tilelang.cuda.intrinsics.macro.mma_macro_generator import INT4TensorCoreIntrinEmitter


@tilelang.jit(target="cpu")
def with_emitter(A, block: int = 16):
    N = T.const("N")
    A: T.Tensor((N,), "float16")
    B = T.empty((N,), "float16")
    emitter = INT4TensorCoreIntrinEmitter(a_dtype="int8", b_dtype="int8", accum_dtype="int32")
    with T.Kernel(T.ceildiv(N, block), threads=32) as bx:
        for i in T.Parallel(block):
            B[bx * block + i] = A[bx * block + i]
    return B
'''


def test_unsupported_mma_emitters_are_rejected_at_the_users_line(mod, tmp_path):
    from tilelang_core.check import check_source
    from tilelang_core.diagnostics import CompileError

    path = tmp_path / "emitter_kernel.py"
    path.write_text(EMITTER)
    kernel = runpy.run_path(str(path), run_name="emitter_kernel")["with_emitter"]
    with pytest.raises(CompileError) as info:
        kernel(torch.ones(32, dtype=torch.float16))
    errors = [d for d in info.value.diagnostics if d.is_error]
    assert errors[0].code == "unsupported-syntax" and errors[0].span.line == 12
    assert "INT4TensorCoreIntrinEmitter` is not supported by tilelang_core" in errors[0].message
    static = [d for d in check_source(EMITTER, str(path)).diagnostics if d.is_error]
    assert [(d.code, d.span.line) for d in static] == [("unsupported-syntax", 12)]
