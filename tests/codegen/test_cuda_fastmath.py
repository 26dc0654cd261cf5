"""TileLang's `tl.enable_fast_math` pass config (codegen/cuda/fastmath.py): off by default; when a kernel asks for
it, fp32 exp2 becomes ex2.approx.ftz, nvcc gets --use_fast_math, and every cache key tells the two builds apart."""
from __future__ import annotations

import dataclasses
import shutil

import pytest

from tilelang_core.codegen.cuda.fastmath import MARKER, fast_exp2, nvcc_flags
from tilelang_core.options import codegen_options, current_options, options_scope

torch = pytest.importorskip("torch")

SRC = '''
import tilelang
import tilelang.language as T


def exp2_kernel(n, fast, target="cuda"):
    configs = {tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True} if fast else None  # TileLang's spelling

    @tilelang.jit(out_idx=[1], target=target, pass_configs=configs)
    def build(n):
        @T.prim_func
        def main(X: T.Tensor((n,), T.float32), Y: T.Tensor((n,), T.float32)):
            with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
                for i in T.Parallel(128):
                    Y[bx * 128 + i] = T.exp2(X[bx * 128 + i])

        return main

    return build(n)
'''


def test_scope_sets_the_flag_only_inside():
    with options_scope(codegen_options({"tl.enable_fast_math": True})):
        assert current_options().fast_math and fast_exp2()
        with options_scope(codegen_options(None)):
            assert not current_options().fast_math
    assert not current_options().fast_math
    with options_scope(codegen_options((("tl.disable_tma_lower", True), ("tl.enable_fast_math", False)))):
        assert not current_options().fast_math and not fast_exp2()


EXP2_FACTORY = """

@tilelang.jit(out_idx=[1]{configs})
def {name}(n=256):
    @T.prim_func
    def main(X: T.Tensor((n,), T.float32), Y: T.Tensor((n,), T.float32)):
        with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
            for i in T.Parallel(128):
                Y[bx * 128 + i] = T.exp2(X[bx * 128 + i])

    return main
"""
STATIC = "\n".join([
    "import tilelang",
    "import tilelang.language as T",
    "PASS_CFG = {tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True}",
    EXP2_FACTORY.format(name="fast", configs=", pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True, "
                                             '"tl.other": 3}'),
    EXP2_FACTORY.format(name="named", configs=", pass_configs=PASS_CFG"),  # a module-level dict by name
    EXP2_FACTORY.format(name="plain", configs=""),
])


def test_decorator_pass_configs_reach_the_static_path_and_the_cache_key():
    from tilelang_core import check_source
    from tilelang_core.runtime.artifact import ir_key

    kernels = {k.factory: k for k in check_source(STATIC, "fast.py").kernels}
    assert kernels["fast"].pass_configs == (("tl.enable_fast_math", True), ("tl.other", 3))
    assert kernels["named"].pass_configs == (("tl.enable_fast_math", True),)  # a module-level dict by name
    assert kernels["plain"].pass_configs == ()
    assert ir_key(kernels["fast"], "sm_90a") != ir_key(dataclasses.replace(kernels["fast"], pass_configs=()),
                                                      "sm_90a")


@pytest.mark.tvm
def test_tilelsp_ir_shows_the_fast_math_code_the_jit_builds():
    from tilelang_core import check_source
    from tilelang_core.lowering import lower

    kernels = {k.factory: k for k in check_source(STATIC, "fast.py").kernels}
    fast = lower(kernels["fast"], "sm_90a").stages["cuda"]
    plain = lower(kernels["plain"], "sm_90a").stages["cuda"]
    assert "tl::exp2_ftz(" in fast.split("exp2_ftz(float x)")[-1] and fast.endswith(MARKER)
    assert "tl::exp2_ftz(" not in plain.split("exp2_ftz(float x)")[-1] and not plain.endswith(MARKER)


def test_nvcc_flag_follows_the_marker():
    assert nvcc_flags("__global__ void k() {}\n") == []
    assert nvcc_flags("__global__ void k() {}\n\n" + MARKER) == ["--use_fast_math"]


@pytest.mark.tvm
@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_jit_pass_configs_reach_the_lowering_and_nvcc(run_aliased):
    glb = run_aliased("fast_math_exp2", SRC)
    ieee = glb["exp2_kernel"](256, False).get_kernel_source()
    fast = glb["exp2_kernel"](256, True).get_kernel_source()
    assert "tl::exp2_ftz(" not in ieee.split("exp2_ftz(float x)")[-1] and not ieee.endswith(MARKER)
    assert "tl::exp2_ftz(" in fast.split("exp2_ftz(float x)")[-1] and fast.endswith(MARKER)  # built: nvcc took the flag


EAGER = """
import tilelang
import tilelang.language as T


@tilelang.jit(target="cuda", pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
def eager_exp2(X):
    n = T.const("n")
    X: T.Tensor[(n,), T.float32]
    Y = T.empty((n,), T.float32)
    with T.Kernel(T.ceildiv(n, 128), threads=128) as bx:
        for i in T.Parallel(128):
            Y[bx * 128 + i] = T.exp2(X[bx * 128 + i])
    return Y
"""


@pytest.mark.tvm
@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc not on PATH")
def test_eager_kernels_honour_pass_configs(run_aliased):
    glb = run_aliased("fast_math_eager", EAGER)
    src = glb["eager_exp2"].compile(n=256).get_kernel_source()
    assert "tl::exp2_ftz(" in src.split("exp2_ftz(float x)")[-1] and src.endswith(MARKER)


@pytest.mark.tvm
def test_cpu_backend_ignores_fast_math(run_aliased):
    glb = run_aliased("fast_math_exp2_cpu", SRC)
    kernel = glb["exp2_kernel"](256, True, target="cpu")
    x = torch.linspace(-20, 20, 256)
    torch.testing.assert_close(kernel(x), torch.exp2(x))
