"""CPU backend numerics: tile ops, tails, dtypes, symbolic dims and errors, on hand-built and parsed kernels."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core.diagnostics import CompileError

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

_BUILT: dict = {}


def build_src(src: str, name: str | None = None):
    """Parse a TileLang source (first kernel, or the one named) and build it for the CPU (cached per session)."""
    from tilelang_core.check import check_source
    from tilelang_core.codegen import cpu

    key = (src, name)
    if key not in _BUILT:
        res = check_source(textwrap.dedent(src), "<test>")
        assert not res.errors, [d.message for d in res.errors]
        func = next(k for k in res.kernels if name in (None, k.name))
        _BUILT[key] = cpu.build(func)
    return _BUILT[key]


@pytest.mark.parametrize("M,N,K,trans_b,dtype", [
    (100, 72, 40, False, "float32"),
    (64, 64, 64, True, "float16"),
    (33, 17, 50, True, "float32"),
    (64, 96, 48, False, "bfloat16"),
])
def test_gemm_tails_and_dtypes(M, N, K, trans_b, dtype):
    from cpu_ir_helpers import gemm_kernel

    from tilelang_core.codegen import cpu

    mod = cpu.build(gemm_kernel(M, N, K, dtype=dtype, trans_b=trans_b))
    tdt = getattr(torch, dtype)
    a = torch.randn(M, K).to(tdt)
    b = (torch.randn(N, K) if trans_b else torch.randn(K, N)).to(tdt)
    c = torch.full((M, N), 7.0).to(tdt)
    mod(a, b, c)
    ref = a.float() @ (b.float().T if trans_b else b.float())
    tol = 1e-5 if dtype == "float32" else 1e-2
    assert ((c.float() - ref).abs().max() / ref.abs().max()).item() <= tol


GEMM_TA = """
import tilelang.language as T

def gemm_tn(M, N, K, bm=32, bn=32, bk=16):
    @T.prim_func
    def tn(A: T.Tensor((K, M), "float16"), B: T.Tensor((N, K), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bk, bm), "float16")
            B_s = T.alloc_shared((bn, bk), "float16")
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.fill(C_l, 123.0)
            T.copy(A[0, by * bm], A_s)
            T.copy(B[bx * bn, 0], B_s)
            T.gemm(A_s, B_s, C_l, transpose_A=True, transpose_B=True, clear_accum=True)
            T.copy(C_l, C[by * bm, bx * bn])
    return tn

k = gemm_tn(50, 40, 16)
"""


def test_gemm_transpose_a_and_b_with_clear_accum():
    mod = build_src(GEMM_TA)
    a, b, c = torch.randn(16, 50).half(), torch.randn(40, 16).half(), torch.zeros(50, 40)
    mod(a, b, c)
    torch.testing.assert_close(c, a.float().T @ b.float().T, rtol=1e-3, atol=1e-3)


REDUCE = """
import tilelang.language as T

def reduce_kernel(M, N, kind, clear):
    @T.prim_func
    def red(X: T.Tensor((M, N), "float32"), Y: T.Tensor((M,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            x = T.alloc_fragment((M, N), "float32")
            y = T.alloc_fragment((M,), "float32")
            T.copy(X, x)
            T.copy(Y, y)
            if kind == "max":
                T.reduce_max(x, y, dim=1, clear=clear)
            elif kind == "min":
                T.reduce_min(x, y, dim=1, clear=clear)
            elif kind == "sum":
                T.reduce_sum(x, y, dim=1, clear=clear)
            elif kind == "abssum":
                T.reduce_abssum(x, y, dim=1)
            else:
                T.reduce_absmax(x, y, dim=1)
            T.copy(y, Y)
    return red

k = reduce_kernel(8, 24, "{kind}", {clear})
"""


@pytest.mark.parametrize("kind,clear", [("max", True), ("min", True), ("sum", True), ("sum", False),
                                        ("max", False), ("abssum", True), ("absmax", True)])
def test_reduce(kind, clear):
    mod = build_src(REDUCE.replace("{kind}", kind).replace("{clear}", str(clear)))
    x, y0 = torch.randn(8, 24), torch.randn(8)
    y = y0.clone()
    mod(x, y)
    ref = {"max": x.amax(1), "min": x.amin(1), "sum": x.sum(1), "abssum": x.abs().sum(1),
           "absmax": x.abs().amax(1)}[kind]
    if not clear:
        ref = ref + y0 if kind == "sum" else torch.maximum(ref, y0)
    torch.testing.assert_close(y, ref, rtol=1e-5, atol=1e-5)


CUMSUM = """
import tilelang.language as T

@T.prim_func
def scan(X: T.Tensor((4, 10), "float32"), Y: T.Tensor((4, 10), "float32"), Z: T.Tensor((4, 10), "float32")):
    with T.Kernel(1, threads=32) as bx:
        s = T.alloc_shared((4, 10), "float32")
        T.copy(X, s)
        T.cumsum(s, dim=1)
        T.copy(s, Y)
        T.copy(X, s)
        T.cumsum(s, dim=1, reverse=True)
        T.copy(s, Z)
"""


def test_cumsum_forward_and_reverse():
    mod = build_src(CUMSUM)
    x, y, z = torch.randn(4, 10), torch.zeros(4, 10), torch.zeros(4, 10)
    mod(x, y, z)
    torch.testing.assert_close(y, x.cumsum(1))
    torch.testing.assert_close(z, x.flip(1).cumsum(1).flip(1))


ELEMWISE = """
import tilelang.language as T

def ew(M, N, bm, bn):
    @T.prim_func
    def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            for i, j in T.Parallel(bm, bn):
                a = A[by * bm + i, bx * bn + j]
                b = B[by * bm + i, bx * bn + j]
                C[by * bm + i, bx * bn + j] = T.if_then_else(a > b, T.exp(T.cast(a, "float32")),
                                                             T.max(T.cast(b, "float32"), 0.5) * 2)
    return main

k = ew(100, 72, 32, 64)
"""


def test_elementwise_tail_let_select_intrinsics():
    mod = build_src(ELEMWISE)
    a, b = torch.randn(100, 72).half(), torch.randn(100, 72).half()
    c = torch.zeros(100, 72)
    mod(a, b, c)
    ref = torch.where(a > b, a.float().exp(), torch.clamp(b.float(), min=0.5) * 2)
    torch.testing.assert_close(c, ref, rtol=1e-3, atol=1e-3)


DYNAMIC = """
import tilelang.language as T

def scale(bm=16):
    M = T.dynamic("M")

    @T.prim_func
    def main(A: T.Tensor((M, 8), "float32"), B: T.Tensor((M, 8), "float32"), s: T.float32):
        with T.Kernel(T.ceildiv(M, bm), threads=32) as bx:
            tile = T.alloc_shared((bm, 8), "float32")
            T.copy(A[bx * bm, 0], tile)
            for i, j in T.Parallel(bm, 8):
                tile[i, j] = tile[i, j] * s + T.sqrt(T.abs(tile[i, j]))
            T.copy(tile, B[bx * bm, 0])
    return main

k = scale()
"""


@pytest.mark.parametrize("M", [1, 37, 64])
def test_symbolic_dim_and_scalar_param(M):
    mod = build_src(DYNAMIC)
    a, b = torch.randn(M, 8), torch.zeros(M, 8)
    mod(a, b, 3.0)
    torch.testing.assert_close(b, a * 3.0 + a.abs().sqrt())


GATHER = """
import tilelang.language as T

@T.prim_func
def gather(I: T.Tensor((64,), "int32"), X: T.Tensor((16,), "float32"), Y: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=64) as bx:
        s = T.alloc_shared((16,), "float32")
        T.copy(X, s)
        for i in T.Parallel(64):
            s[I[i] % 1000] = s[I[i] % 1000] + 0.0
            Y[i] = s[I[i]] + X[I[i]]
"""


def test_data_dependent_indices_outside_buffers_are_guarded():
    mod = build_src(GATHER)
    idx = torch.tensor([3, 15, 16, 500, -1, 0] + [100000] * 58, dtype=torch.int32)
    x, y = torch.randn(16), torch.zeros(64)
    mod(idx, x, y)  # out-of-range reads give 0 and writes are skipped: no crash
    expected = torch.tensor([2 * x[3], 2 * x[15], 0, 0, 0, 2 * x[0]] + [0.0] * 58)
    torch.testing.assert_close(y, expected)


ATOMIC = """
import tilelang.language as T

@T.prim_func
def colsum(A: T.Tensor((64, 16), "float32"), S: T.Tensor((16,), "float32")):
    with T.Kernel(4, threads=32) as bx:
        for i, j in T.Parallel(16, 16):
            T.atomic_add(S[j], A[bx * 16 + i, j])
"""


def test_atomic_add_across_blocks():
    mod = build_src(ATOMIC)
    a, s = torch.randn(64, 16), torch.zeros(16)
    mod(a, s)
    torch.testing.assert_close(s, a.sum(0), rtol=1e-5, atol=1e-5)
    assert "T.parallel" not in mod.tir_text  # atomics: blocks run serially on the CPU


def test_ir_texts_are_kept():
    mod = build_src(CUMSUM)
    assert "T.prim_func" in mod.tir_text and "scan" in mod.tir_text
    assert "define" in mod.llvm_ir and "scan" in mod.llvm_ir


def test_unsupported_construct_is_a_compile_error_at_the_user_line():
    from tilelang_core.codegen import cpu
    from tilelang_core.ir import nodes as N
    from tilelang_core.source import Span

    a = N.Buffer("A", (N.Const(4),), "float32")
    call = N.Call("no_such_intrinsic", (N.Load(a, (N.Const(0),)),), span=Span(7, 4, 7, 30))
    body = N.Launch((N.Const(1),), (N.Const(32),), (N.Var("bx", kind="block"),),
                    N.Store(a, (N.Const(0),), call, span=Span(7, 4, 7, 30)))
    func = N.PrimFunc("k", (a,), body, source_path="k.py")
    with pytest.raises(CompileError) as info:
        cpu.to_tir(func)
    diag = info.value.diagnostics[0]
    assert diag.code == "lowering-unsupported" and diag.span.line == 7
    assert "no_such_intrinsic" in diag.message


def test_copy_pairs_axes_from_the_right_when_non_unit_counts_differ():
    from cpu_ir_helpers import C, full

    from tilelang_core.codegen import cpu
    from tilelang_core.ir import nodes as N

    n = N.Var("n", kind="symbolic")
    X = N.Buffer("X", (n, C(8)), "float32")
    Y = N.Buffer("Y", (C(8),), "float32")
    s = N.Buffer("s", (C(8),), "float32", "shared.dyn")
    src = N.Region(X, (N.Axis(C(0), n), N.Axis(C(0), C(8))), "slice")
    body = N.SeqStmt((N.Allocate(s), N.Copy(src, full(s)), N.Copy(full(s), full(Y))))
    launch = N.Launch((C(1),), (C(32),), (N.Var("bx", kind="block"),), body)
    mod = cpu.build(N.PrimFunc("rows", (X, Y), N.SeqStmt((launch,))))
    x, y = torch.randn(1, 8), torch.zeros(8)
    mod(x, y)
    torch.testing.assert_close(y, x[0])


def test_user_cuda_code_is_a_compile_error_naming_it():
    from tilelang_core.codegen import cpu

    src = textwrap.dedent("""
    import tilelang.language as T

    @T.prim_func
    def k(A: T.Tensor((4,), "float32")):
        with T.Kernel(1, threads=32):
            T.import_source("__device__ void twice(float* x) { *x *= 2; }")
            T.call_extern("handle", "twice", T.address_of(A[0]))
    """)
    from tilelang_core.check import check_source

    res = check_source(src, "<test>")
    assert not res.errors, [d.message for d in res.errors]
    with pytest.raises(CompileError) as info:
        cpu.to_tir(res.kernels[0])
    diag = info.value.diagnostics[0]
    assert diag.code == "lowering-unsupported" and diag.span.line == 7
    assert "T.import_source" in diag.message and "CUDA" in diag.message


PARAM_VIEW = """
import tilelang
import tilelang.language as T

@T.prim_func
def flat(W: T.Tensor((4, 4, 8), "float32"), O: T.Tensor((16, 8), "float32")):
    with T.Kernel(1, threads=128) as bx:
        W_flat = T.Tensor((16, 8), "float32", W.data)
        s = T.alloc_shared((16, 8), "float32")
        T.copy(W_flat[0, 0], s)
        T.copy(s, O)
"""


def test_view_of_a_parameter_made_in_the_kernel_is_declared_once():  # convolution/example_convolution's kernel_flat
    mod = build_src(PARAM_VIEW)
    w, o = torch.randn(4, 4, 8), torch.zeros(16, 8)
    mod(w, o)
    assert torch.equal(o, w.view(16, 8))


UNNAMED_KERNEL = """
import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((256,), "float16"), B: T.Tensor((256,), "float16")):
    with T.Kernel(1, threads=128):
        for i in T.Parallel(256):
            B[i] = A[i] * 2
"""


def test_kernel_without_as_names_and_a_single_statement():
    mod = build_src(UNNAMED_KERNEL)
    a, b = torch.randn(256).half(), torch.zeros(256).half()
    mod(a, b)
    torch.testing.assert_close(b, a * 2)


LOCAL_GEMM = """
import tilelang.language as T


@T.prim_func
def local_gemm(A: T.Tensor((16, 8), T.float32), B: T.Tensor((8, 16), T.float32), C: T.Tensor((16, 16), T.float32)):
    with T.Kernel(1) as _:
        A_l = T.alloc_local((16, 8), T.float32)
        B_l = T.alloc_local((8, 16), T.float32)
        C_l = T.alloc_local((16, 16), T.float32)
        T.copy(A, A_l)
        T.copy(B, B_l)
        T.gemm(A_l, B_l, C_l, clear_accum=True)
        T.copy(C_l, C)
"""


def test_gemm_of_local_tiles_runs_on_the_cpu_target_and_is_refused_for_cuda():
    """TileLang's CPU target multiplies tiles of any scope (GemmScalar); tensor cores read shared or fragments."""
    import tilelang_core

    kernel = tilelang_core.check_source(textwrap.dedent(LOCAL_GEMM), "<test>").kernels[0]
    a, b, c = torch.randn(16, 8), torch.randn(8, 16), torch.zeros(16, 16)
    tilelang_core.compile(kernel, target="cpu")(a, b, c)
    torch.testing.assert_close(c, a @ b)
    with pytest.raises(CompileError, match="gemm-operand-scope"):
        tilelang_core.lower(kernel, target="sm_90a")
