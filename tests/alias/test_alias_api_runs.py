"""TileLang's public API end to end on the CPU backend under the alias: tilelang.lower of a @T.prim_func,
par_compile, eager kernels built from macros, T.print, None for an unused tensor, symbolic factory arithmetic,
T.StridedTensor parameters, Profiler.do_bench(dynamic_symbolic_constraints=), autotune's __return_kernel."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

KERNELS = '''
import tilelang
import tilelang.language as T


def add(N, value=1.0):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=4) as bx:
            for i in T.Parallel(N):
                B[i] = A[i] + value
    return main


@tilelang.jit(target="cpu", out_idx=-1)
def add_factory(N, value=1.0):
    return add(N, value)


@tilelang.jit(target="cpu", out_idx=-1)
def with_bias(N, use_bias=False):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), Bias: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=4) as bx:
            for i in T.Parallel(N):
                B[i] = A[i] + (Bias[i] if use_bias else 0.0)
    return main


@tilelang.jit(target="cpu", out_idx=-1)
def doubled(M, N):
    M2 = M * 2
    @T.prim_func
    def main(A: T.Tensor((M, N), "float32"), B: T.Tensor((M2, N), "float32")):
        with T.Kernel(T.ceildiv(M2, 4), threads=4) as bx:
            for i, j in T.Parallel(4, N):
                if bx * 4 + i < M2:
                    B[bx * 4 + i, j] = A[(bx * 4 + i) % M, j]
    return main


def strided(M, N, ld):
    @T.prim_func
    def main(A: T.StridedTensor((M, N), (ld, 1), "float32"), B: T.Tensor((M, N), "float32")):
        with T.Kernel(1, threads=4) as bx:
            for i, j in T.Parallel(M, N):
                B[i, j] = A[i, j]
    return main


@T.macro
def copy_out(A):
    M, N = A.shape
    B = T.empty((M, N), "float32")
    with T.Kernel(1, threads=4):
        for i, j in T.Parallel(M, N):
            B[i, j] = A[i, j] * 2.0
    return B


@T.macro
def inc(B, A, i):
    B[i] = A[i] + 1.0


@tilelang.jit(target="cpu", out_idx=-1)
def lazy_with_macro(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=4):
            for i in T.Parallel(N):
                inc(B, A, i)
    return main


@tilelang.jit(target="cpu")
def eager_double(A):
    M, N = T.const("M, N")
    A: T.Tensor[[M, N], "float32"]
    return copy_out(A)


@tilelang.jit(target="cpu")
def eager_signature(A: T.Tensor[[8, 4], "float32"]):
    return copy_out(A)


def fast_math(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=4) as bx:
            for i in T.Parallel(N):
                C[i] = T.__exp10(A[i]) + T.__sin(A[i]) + T.fmod(A[i], B[i])
    return main


def printing(N):
    @T.prim_func
    def main(A: T.Tensor((N,), "float16")):
        with T.Kernel(1, threads=4) as bx:
            s = T.alloc_shared((N,), "float16")
            for i in T.Parallel(N):
                s[i] = A[i]
            T.print(s, msg="tile")
            tid = T.get_thread_binding()
            if tid == 2:
                T.print(tid * 10, msg="100% scalar")
    return main
'''


@pytest.fixture(scope="module")
def k(run_aliased):
    return run_aliased("api_runs_kernels", KERNELS)


def test_lower_takes_a_prim_func_and_any_target(k):
    import tilelang
    import tvm

    cpu = tilelang.lower(k["add"](16), target="cpu")
    assert cpu.target == "cpu" and "define" in cpu.kernel_source and len(cpu.params) == 2
    with tvm.target.Target("c"):  # the enclosing target context, as TileLang's CPU tests use it
        assert tilelang.lower(k["add"](16)).target == "cpu"
    cuda = tilelang.lower(k["add"](16), target=tvm.target.Target({"kind": "cuda", "arch": "sm_80"}))
    assert cuda.target == "sm_80" and "__global__" in cuda.kernel_source


def test_par_compile(k):
    import tilelang

    a = torch.arange(8, dtype=torch.float32)
    kernels = k["add_factory"].par_compile([(8,), {"N": 8, "value": 3.0}])
    assert torch.equal(kernels[0](a), a + 1) and torch.equal(kernels[1](a), a + 3)
    both = tilelang.par_compile([k["add"](8), k["add"](8, 2.0)], out_idx=-1, target="cpu")
    assert torch.equal(both[1](a), a + 2) and both[0].get_kernel_source(kernel_only=True)


def test_eager_kernels_built_from_a_macro(k):
    import tilelang.language as T

    a = torch.randn(8, 4)
    assert torch.equal(k["eager_double"](a), a * 2)
    assert torch.equal(k["eager_signature"](a), a * 2)
    assert type(k["lazy_with_macro"]).__name__ == "JITFactory"  # its macro call is inside the prim_func
    assert torch.equal(k["lazy_with_macro"](4)(torch.zeros(4)), torch.ones(4))
    func = k["eager_double"].get_tir(T.Tensor((8, 4), "float32"))
    assert [p.name for p in func.params][0] == "A" and func.out_idx == (1,)


def test_print_on_the_cpu(k, capfd):
    import tilelang

    kernel = tilelang.compile(k["printing"](3), target="cpu")
    capfd.readouterr()
    kernel(torch.tensor([0.5, 1.0, 1.5], dtype=torch.float16))
    lines = capfd.readouterr().out.splitlines()
    assert "msg='tile' buffer=s index=(2) dtype=float16 value=1.5" in lines
    assert sum(line.startswith("msg='tile'") for line in lines) == 3  # one thread prints the buffer
    assert "msg='100% scalar' dtype=int32 value=20" in lines


def test_none_for_a_tensor_the_kernel_never_touches(k):
    a = torch.arange(4, dtype=torch.float32)
    assert torch.equal(k["with_bias"](4)(a, None), a)
    with pytest.raises(TypeError, match="'Bias'"):
        k["with_bias"](4, use_bias=True)(a, None)


def test_symbolic_arithmetic_in_a_factory(k):
    import tilelang.language as T

    a = torch.randn(5, 3)
    assert torch.equal(k["doubled"](T.dynamic("m"), 3)(a), torch.cat([a, a]))


def test_strided_tensor_parameter(k):
    import tilelang

    kernel = tilelang.compile(k["strided"](4, 4, 8), out_idx=[1], target="cpu")
    a = torch.randn(4, 8)
    assert torch.equal(kernel(a[:, :4]), a[:, :4])


def test_do_bench_binds_dynamic_symbolic_constraints(k):
    import tilelang
    import tilelang.language as T

    kernel = tilelang.compile(k["add"](T.dynamic("n")), out_idx=-1, target="cpu")
    profiler = kernel.get_profiler()
    assert profiler.do_bench(dynamic_symbolic_constraints={"n": 64}, warmup=1, rep=2) > 0
    with pytest.raises(ValueError, match="'n'"):
        profiler.do_bench(dynamic_symbolic_constraints={"m": 64}, warmup=1, rep=2)


def test_autotune_return_kernel(k):
    from tilelang.autotuner import autotune

    tuned = autotune(configs=[{"value": 1.0}, {"value": 2.0}], warmup=1, rep=2, skip_check=True)(k["add_factory"])
    kernel = tuned(8, __return_kernel=True)
    result = tuned(8, __return_kernel=False)
    assert result.kernel is kernel and result.config in ({"value": 1.0}, {"value": 2.0})


def test_fast_math_and_libm_intrinsics_on_the_cpu(k):
    import tilelang

    kernel = tilelang.compile(k["fast_math"](16), out_idx=[2], target="cpu")
    a, b = torch.rand(16) * 3, torch.rand(16) + 0.25
    torch.testing.assert_close(kernel(a, b), 10 ** a + torch.sin(a) + torch.fmod(a, b), rtol=1e-5, atol=1e-5)
