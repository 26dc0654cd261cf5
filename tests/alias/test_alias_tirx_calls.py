"""`tvm.tirx` scalar constructors inside kernels (`from tvm import tirx` or `tilelang.tvm.tirx`, as TileLang
dequantisation helpers write them) are rewritten to T builtins: results match torch on the CPU backend."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

KERNELS = '''
import tilelang
import tilelang.language as T
from tilelang import tvm as tvm
from tvm import tirx


@T.macro
def relu_plus(x: tirx.PrimExpr):
    zero = tirx.Cast(T.float32, tirx.const(0, T.int32))
    return tirx.Max(x, zero) + tirx.const(1.5, T.float32) + tirx.Min(x, tvm.tirx.const(0.0, T.float32)) * 0


@T.macro
def bits_to_half(bits: tvm.tirx.PrimExpr):
    return tirx.reinterpret(T.float16, bits & tirx.const(0xFFFF, T.uint16))


@tilelang.jit(out_idx=[1], target="cpu")
def relu(N):
    @T.prim_func
    def main(A: T.Tensor((N,), T.float32), C: T.Tensor((N,), T.float32)):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                C[i] = relu_plus(A[i])
    return main


@tilelang.jit(out_idx=[1], target="cpu")
def to_half(N):
    @T.prim_func
    def main(B: T.Tensor((N,), T.uint16), D: T.Tensor((N,), T.float16)):
        with T.Kernel(1, threads=32) as bx:
            for i in T.Parallel(N):
                D[i] = tirx.Select(B[i] > tirx.const(0, T.uint16), bits_to_half(B[i]), tirx.const(0, T.float16))
    return main
'''


@pytest.fixture(scope="module")
def mod(run_aliased):
    return run_aliased("tirx_kernels", KERNELS)


def test_tirx_const_cast_max_min_match_torch(mod):
    a = torch.randn(64)
    torch.testing.assert_close(mod["relu"](64)(a), torch.relu(a) + 1.5)


def test_tirx_select_and_reinterpret_become_t_builtins(mod):
    from tilelang_core.ir.printer import print_func

    text = print_func(mod["to_half"].get_tir(64))
    # T.Select is the builtins' if_then_else (both branches are side-effect free here)
    assert "if_then_else(B[i] > 0" in text and "reinterpret(" in text and "tirx" not in text
