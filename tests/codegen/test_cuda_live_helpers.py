"""Plain Python helpers of a running file called in a kernel (a mask helper, a converter factory returning a
closure, as the real examples write them) are inlined like macros, a helper given only Python values runs at
trace time, and T.reinterpret lowers: compiled for
sm_90a with nvcc and run on the CPU backend against torch."""
from __future__ import annotations

import runpy
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

KERNELS = '''
import os

import tilelang_core as tilelang
import tilelang_core.language as T


def block_mask(i, j, blk: int):
    same = T.if_then_else(i // blk == j // blk, 1, 0)
    return T.if_then_else(i >= j, 1, same)


def nibble_converter(nbit: int):
    def convert(val, pos, dtype="float16"):
        mask = (1 << nbit) - 1
        return ((val >> (pos.astype("uint16") * nbit)) & mask).astype(dtype)
    return convert


def doubling() -> bool:
    return os.environ.get("TILELSP_TEST_UNSET_VARIABLE") is None   # Python the kernel parser does not evaluate


def gated(target):
    @tilelang.jit(target=target)
    def kernel(X):
        M = T.const("M")
        X: T.Tensor((M,), "float32")
        twice = doubling()                # trace-time Python: runs, it is not a kernel statement
        Y = T.empty((M,), "float32")
        with T.Kernel(T.ceildiv(M, 32), threads=32) as bx:
            for i in T.Parallel(32):
                if twice:
                    Y[bx * 32 + i] = X[bx * 32 + i] * 2.0
                else:
                    Y[bx * 32 + i] = X[bx * 32 + i]
        return Y
    return kernel


def masked(target):
    @tilelang.jit(out_idx=[-1], target=target)
    def factory(n: int = 32, blk: int = 4):
        @T.prim_func
        def main(S: T.Tensor((n, n), "float32"), O: T.Tensor((n, n), "float32")):
            with T.Kernel(1, threads=128) as bx:
                for i, j in T.Parallel(n, n):
                    allowed = block_mask(i, j, blk)
                    O[i, j] = T.if_then_else(allowed > 0, S[i, j], -1.0)
        return main
    return factory


def unpack(target):
    @tilelang.jit(out_idx=[-1], target=target)
    def factory(n: int = 16, k: int = 32):
        @T.prim_func
        def main(B: T.Tensor((n, k // 2), "uint8"), O: T.Tensor((n, k), "float16")):
            with T.Kernel(1, threads=128) as bx:
                for i, j in T.Parallel(n, k):
                    O[i, j] = nibble_converter(4)(B[i, j // 2], j % 2, dtype="float16")
        return main
    return factory


def high_bits(target):
    @tilelang.jit(out_idx=[-1], target=target)
    def factory(n: int = 64):
        @T.prim_func
        def main(X: T.Tensor((n,), "float16"), O: T.Tensor((n,), "int32")):
            with T.Kernel(1, threads=64) as bx:
                for i in T.Parallel(n):
                    O[i] = T.cast(T.reinterpret(X[i], T.uint16) >> 8, "int32")
        return main
    return factory
'''


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("helpers") / "helper_kernels.py"
    path.write_text(textwrap.dedent(KERNELS))
    return runpy.run_path(str(path), run_name="helper_kernels")


@pytest.mark.nvcc
@pytest.mark.parametrize("name", ["masked", "unpack", "high_bits"])
def test_helper_kernels_compile_for_sm90a(mod, name):
    kernel = mod[name]("sm_90a")()
    assert kernel.arch == "sm_90a" and "__global__" in kernel.get_kernel_source()


@pytest.mark.nvcc
def test_a_helper_on_python_values_runs_at_trace_time(mod):
    kernel = mod["gated"]("sm_90a").compile(M=64)
    assert "__global__" in kernel.get_kernel_source()
    x = torch.randn(64)
    torch.testing.assert_close(mod["gated"]("cpu")(x), x * 2.0)


def test_mask_helper_runs_on_the_cpu_backend(mod):
    s = torch.randn(32, 32)
    i, j = torch.arange(32)[:, None], torch.arange(32)[None, :]
    ref = torch.where((i >= j) | (i // 4 == j // 4), s, torch.full_like(s, -1.0))
    torch.testing.assert_close(mod["masked"]("cpu")()(s), ref)


def test_converter_closure_runs_on_the_cpu_backend(mod):
    b = torch.randint(0, 256, (16, 16), dtype=torch.uint8)
    ref = torch.stack((b & 0x0F, b >> 4), dim=-1).reshape(16, 32).to(torch.float16)
    torch.testing.assert_close(mod["unpack"]("cpu")()(b), ref)


def test_reinterpret_runs_on_the_cpu_backend(mod):
    x = torch.randn(64).to(torch.float16)
    ref = (x.view(torch.int16).to(torch.int32) & 0xFFFF) >> 8
    torch.testing.assert_close(mod["high_bits"]("cpu")()(x), ref)
