"""The TileLang-compatible JIT on the CPU backend: calls, out_idx, argument validation, caching, sources,
profiler, errors, target resolution."""
from __future__ import annotations

import runpy
import sys
import textwrap

import pytest

torch = pytest.importorskip("torch")

KERNELS = '''
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1], target="cpu")
def matmul(M, N, K, bm=32, bn=32, bk=32):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float32")
            B_s = T.alloc_shared((bk, bn), "float32")
            C_l = T.alloc_fragment((bm, bn), "float32")
            T.clear(C_l)
            for ko in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, ko * bk], A_s)
                T.copy(B[ko * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C[by * bm, bx * bn])
    return gemm


@tilelang.jit(out_idx=[1, 2], target="cpu")
def two_outputs(bm=16):
    M = T.dynamic("M")

    @T.prim_func
    def split(X: T.Tensor((M, 4), "float16"), P: T.Tensor((M, 4), "float16"), Q: T.Tensor((M, 4), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=32) as bx:
            for i, j in T.Parallel(bm, 4):
                P[bx * bm + i, j] = X[bx * bm + i, j] * 2
                Q[bx * bm + i, j] = T.cast(X[bx * bm + i, j], "float32") + 1
    return split


@tilelang.jit(target="cpu")
def eager_scale(X, alpha: float = 2.0, block: int = 16):
    M, N = T.const("M, N")
    X: T.Tensor((M, N), "float32")
    Y = T.empty((M, N), "float32")
    with T.Kernel(T.ceildiv(M, block), threads=32) as bx:
        tile = T.alloc_fragment((block, N), "float32")
        T.copy(X[bx * block, 0], tile)
        for i, j in T.Parallel(block, N):
            tile[i, j] = tile[i, j] * alpha
        T.copy(tile, Y[bx * block, 0])
    return Y


@tilelang.jit(out_idx=[-1], target="cpu")
def mismatched(M):
    @T.prim_func
    def g(A: T.Tensor((M, 64), "float16"), B: T.Tensor((64, M), "float16"), C: T.Tensor((M, M), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((M, 32), "float16")
            B_s = T.alloc_shared((64, M), "float16")
            C_l = T.alloc_fragment((M, M), "float32")
            T.copy(A[0, 0], A_s)
            T.copy(B[0, 0], B_s)
            T.gemm(A_s, B_s, C_l)
            T.copy(C_l, C)
    return g


@tilelang.jit(target="cpu")
def biased(n, with_bias=False):
    @T.prim_func
    def add(X: T.Tensor((n,), "float32"), Bias: T.Tensor((n,), "float32"), Y: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(n):
                Y[i] = X[i]
                if with_bias:
                    Y[i] = Y[i] + Bias[i]
    return add


def broken(n):
    @T.prim_func
    def bad(A: T.Tensor((n,), "float32")):
        with T.Kernel(1, threads=32) as bx:
            A[0] = undefined_thing
    return bad
'''

pytestmark = pytest.mark.tvm


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    from tilelang_core.alias import install_alias, uninstall_alias

    path = tmp_path_factory.mktemp("jit") / "kernels.py"
    path.write_text(textwrap.dedent(KERNELS))
    had = "tilelang" in sys.modules
    install_alias(force=True)
    glb = runpy.run_path(str(path), run_name="kernels")
    yield glb
    if not had:
        uninstall_alias()


@pytest.fixture(scope="module")
def gemm(mod):
    return mod["matmul"](64, 32, 128)


def test_call_allocates_and_returns_output(gemm):
    a, b = torch.randn(64, 128), torch.randn(128, 32)
    c = gemm(a, b)
    assert c.shape == (64, 32) and c.dtype == torch.float32
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


def test_all_parameters_in_place_and_non_contiguous_inputs(gemm):
    a, b = torch.randn(128, 64).T, torch.randn(128, 32)
    c = torch.empty(64, 32)
    assert gemm(a, b, c) is c
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)


def test_factory_cache_per_arguments(mod, gemm):
    assert mod["matmul"](64, 32, 128) is gemm
    assert mod["matmul"](64, 32, 64) is not gemm


def test_params_and_sources(gemm):
    assert [(p.name, p.shape, p.is_output) for p in gemm.params] == [
        ("A", (64, 128), False), ("B", (128, 32), False), ("C", (64, 32), True)]
    assert "define" in gemm.get_kernel_source()
    assert "T.prim_func" in gemm.get_ir("tir")


@pytest.mark.parametrize("args,exc,words", [
    ((torch.randn(64, 128),), TypeError, ["takes 2 argument(s) (A, B) but 1 were given"]),
    ((torch.randn(64, 128), torch.randn(128, 32).half()), TypeError, ["'B'", "float16", "float32"]),
    ((torch.randn(64, 128), torch.randn(128, 32, 1)), ValueError, ["'B'", "3 dimension(s)"]),
    ((torch.randn(64, 128), torch.randn(64, 32)), ValueError,
     ["argument 'B' has shape (64, 32) but the kernel expects (128, 32)"]),
    ((torch.randn(64, 128), [[1.0]]), TypeError, ["'B'", "torch.Tensor"]),
    ((torch.randn(64, 128), torch.randn(128, 32, device="meta")), ValueError, ["'B'", "device", "cpu"]),
])
def test_argument_validation_names_the_parameter(gemm, args, exc, words):
    with pytest.raises(exc) as info:
        gemm(*args)
    for w in words:
        assert w in str(info.value)


def test_none_is_a_null_pointer_for_a_tensor_the_kernel_never_touches(mod):
    x, y = torch.randn(16), torch.zeros(16)
    mod["biased"](16)(x, None, y)
    torch.testing.assert_close(y, x)
    with pytest.raises(TypeError, match="'Bias' is None .* reads or writes it"):
        mod["biased"](16, with_bias=True)(x, None, y)


def test_symbolic_dims_bind_consistently_and_multiple_outputs(mod):
    k = mod["two_outputs"]()
    x = torch.randn(37, 4).half()
    p, q = k(x)
    torch.testing.assert_close(p, x * 2)
    torch.testing.assert_close(q, x.float() + 1)
    p2 = torch.empty(36, 4).half()
    with pytest.raises(ValueError) as info:
        k(x, p2, torch.empty(37, 4))
    msg = str(info.value)
    assert "argument 'P' has shape (36, 4)" in msg and "(M, 4) = (37, 4)" in msg and "argument 'X'" in msg


def test_profiler_assert_allclose_and_bench(gemm):
    prof = gemm.get_profiler()
    prof.assert_allclose(lambda A, B: A @ B, rtol=1e-4, atol=1e-4)
    with pytest.raises(AssertionError, match="differ"):
        prof.assert_allclose(lambda A, B: A @ B + 1.0)
    ms = prof.do_bench(warmup=1, rep=3)
    assert 0.0 < ms < 10_000


def test_profiler_mismatch_ratio_inputs_and_supply_types(gemm):
    a, b = torch.randn(64, 128), torch.randn(128, 32)

    def one_wrong(A, B):
        out = A @ B
        out[0, 0] += 5.0
        return out

    prof = gemm.get_profiler()
    prof.assert_allclose(one_wrong, input_tensors=[a, b], atol=1e-3, rtol=1e-3)  # 1 of 2048 <= 1%
    with pytest.raises(AssertionError, match=r"1 of 2048"):
        prof.assert_allclose(one_wrong, [a, b], atol=1e-3, rtol=1e-3, max_mismatched_ratio=0.0)
    zero = gemm.get_profiler(tensor_supply_type="Zero")
    zero.assert_allclose(lambda A, B: torch.zeros(64, 32), max_mismatched_ratio=0.0)
    assert zero._inputs()[0].abs().sum() == 0
    assert zero.run_once().abs().sum() == 0  # the kernel once on the profiler's inputs (TileLang's run_once)
    assert torch.equal(prof.run_once(lambda A, B: A[:1, :1]), prof._inputs()[0][:1, :1])
    ins, both = prof._get_inputs(), prof._get_inputs(with_output=True)  # TileLang's names for the same
    assert [tuple(x.shape) for x in ins] == [(64, 128), (128, 32)] and torch.equal(ins[0], prof._inputs()[0])
    assert [tuple(x.shape) for x in both] == [(64, 128), (128, 32), (64, 32)]


def test_kernel_with_errors_raises_compile_error_with_location(mod):
    from tilelang_core import CompileError
    from tilelang_core.runtime.jit import compile

    with pytest.raises(CompileError) as info:
        compile(mod["broken"](8), target="cpu")
    text = str(info.value)
    assert "kernels.py:" in text and "undefined_thing" in text and "undefined-name" in text


def test_static_analysis_errors_stop_the_jit(mod):
    from tilelang_core import CompileError

    with pytest.raises(CompileError) as info:
        mod["mismatched"](32)
    assert "gemm-shape-mismatch" in str(info.value) and "kernels.py:" in str(info.value)


def test_compile_rejects_non_kernels():
    from tilelang_core.runtime.jit import compile

    with pytest.raises(TypeError, match="prim_func"):
        compile(lambda: None, target="cpu")


@pytest.mark.parametrize("target,expected", [
    ("cpu", ("cpu", "")), ("llvm", ("cpu", "")), ("sm_80", ("cuda", "sm_80")), ("cuda:sm_80", ("cuda", "sm_80")),
    ({"kind": "cuda", "arch": "sm_90a"}, ("cuda", "sm_90a")), ({"kind": "llvm"}, ("cpu", "")),
    ("cuda -arch=sm_86", ("cuda", "sm_86")),
])
def test_machine_target(target, expected):
    from tilelang_core.runtime.jit_kernel import machine_target

    found = machine_target(target)
    assert (found.kind, found.arch_name) == expected


def test_machine_target_auto_and_unknown():
    from tilelang_core.runtime.jit_kernel import machine_target

    assert machine_target("auto").kind == ("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="unknown target"):
        machine_target("tpu")


@pytest.mark.tvm
def test_auto_takes_the_target_of_an_enclosing_tvm_target_block(monkeypatch):
    """`with tvm.target.Target("c"): tilelang.compile(f)` builds for the CPU even where torch sees a GPU (the peer
    cpu gemm test passed CPU tensors to a CUDA kernel on the H200); a target given explicitly still wins."""
    import tvm

    from tilelang_core.runtime import jit_kernel as jit

    monkeypatch.setattr(jit, "device_target", lambda: "sm_90a")
    assert jit.machine_target("auto").name == "sm_90a"
    with tvm.target.Target("c"):
        assert jit.machine_target("auto").kind == "cpu" and jit.machine_target(None).kind == "cpu"
        assert jit.machine_target("sm_80").name == "sm_80"
    with tvm.target.Target({"kind": "cuda", "arch": "sm_80"}):
        assert jit.machine_target("auto").name == "sm_80"


def test_out_idx_normalisation():
    from tilelang_core.runtime.kernel import normalize_out_idx

    assert normalize_out_idx(-1, 3) == (2,)
    assert normalize_out_idx([0, -1], 3) == (0, 2)
    assert normalize_out_idx(None, 3) == ()
    with pytest.raises(ValueError, match="out of range"):
        normalize_out_idx(3, 3)


def test_compile_a_prim_func_and_get_ir_stages(mod):
    from tilelang_core.runtime.jit import compile

    kernel = compile(mod["two_outputs"].factory(bm=8), out_idx=[-2, -1], target="llvm")
    x = torch.randn(20, 4).half()
    p, q = kernel(x)
    torch.testing.assert_close(p, x * 2)
    assert kernel.target == "cpu" and [p.is_output for p in kernel.params] == [False, True, True]
    assert "split" in kernel.get_ir("parsed")
    with pytest.raises(ValueError, match="unknown stage"):
        kernel.get_ir("no-such-stage")


@pytest.mark.nvcc
def test_cuda_target_builds_an_artifact_without_a_gpu(mod):
    from tilelang_core.runtime.jit import JITFactory

    factory = JITFactory(mod["matmul"].factory, out_idx=[-1], target="sm_80")
    kernel = factory(64, 64, 64)
    assert kernel.target == "cuda" and kernel.arch == "sm_80"
    assert "__global__" in kernel.get_kernel_source()


def test_eager_style_kernel_specialises_on_shapes(mod):
    k = mod["eager_scale"]
    x = torch.randn(37, 12)
    torch.testing.assert_close(k(x), x * 2.0)
    torch.testing.assert_close(k(x, alpha=0.5), x * 0.5)
    torch.testing.assert_close(k(torch.ones(5, 3)), torch.full((5, 3), 2.0))
    assert len(k._cache) == 3
    compiled = k.compile(M=8, N=4)
    assert [p.name for p in compiled.params] == ["X", "Y"] and compiled.params[1].is_output
    called = k.compile(x, 0.5)  # the arguments of a call (sparse_mla_fwd_pipelined): that call's kernel
    torch.testing.assert_close(called(x), x * 0.5)
    assert len(k._cache) == 3
