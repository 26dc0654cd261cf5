"""T.reduce_max / min / absmax and NaN: ignored by default (fmaxf / fminf, as CUDA's max), the result with
`nan_propagate=True` (it was accepted and ignored); the CPU against torch, the CUDA lowering through nvcc."""
from __future__ import annotations

import textwrap

import pytest
from test_cpu_backend import build_src

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

NAN_REDUCE = """
import tilelang.language as T


@T.prim_func
def red(A: T.Tensor((16, 64), T.float16), B: T.Tensor((16,), T.float16)):
    with T.Kernel(1, threads=128):
        src = T.alloc_fragment((16, 64), T.float16)
        dst = T.alloc_fragment((16,), T.float16)
        T.copy(A, src)
        T.reduce_{op}(src, dst, dim=1, nan_propagate={nan})
        T.copy(dst, B)
"""


def _inputs():
    a = torch.randn(16, 64).half()
    a[3, 7] = float("nan")
    a[9, 0] = float("nan")
    a[9, 63] = float("nan")
    return a


@pytest.mark.parametrize("op", ["max", "min", "absmax"])
@pytest.mark.parametrize("nan", [True, False])
def test_cpu_reduction_and_nan(op, nan):
    a, b = _inputs(), torch.zeros(16).half()
    build_src(NAN_REDUCE.format(op=op, nan=nan))(a, b)
    x = a.float().abs() if op == "absmax" else a.float()
    finite = x.nan_to_num(nan=float("-inf") if op != "min" else float("inf"))
    want = finite.amin(1) if op == "min" else finite.amax(1)
    if nan:
        want[[3, 9]] = float("nan")
    torch.testing.assert_close(b.float(), want.half().float(), equal_nan=True, atol=0, rtol=0)


@pytest.mark.nvcc
def test_cuda_nan_propagating_reduction_compiles():
    from tilelang_core.check import check_source
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    def cuda(nan):
        kernel = check_source(textwrap.dedent(NAN_REDUCE.format(op="max", nan=nan)), "<test>").kernels[0]
        return generate(kernel, "sm_90a").source

    source = cuda(True)
    assert source.count(" != ") > cuda(False).count(" != ")  # TVM writes isnan(x) as x != x
    assert compile_cubin(source, "sm_90a")[:4] == b"\x7fELF"


ROW_IN_REGISTERS = """
import tilelang.language as T


@T.prim_func
def red(A: T.Tensor((64,), T.float16), B: T.Tensor((1,), T.float16)):
    with T.Kernel(1, threads=32):
        frag = T.alloc_fragment((64,), T.float16)
        out = T.alloc_fragment((1,), T.float16)
        T.copy(A, frag)
        T.reduce_max(frag, out, nan_propagate={nan})
        T.copy(out, B)
"""


def test_a_nan_propagating_row_in_registers_does_not_go_through_the_lane_shuffles():
    """A row spread over the registers of whole warps reduces with lane shuffles (fmaxf: a NaN is dropped; the peer
    suite's nan_propagate tests got 63.0 on the H200); with nan_propagate it takes the NaN-aware path."""
    from tilelang_core.check import check_source
    from tilelang_core.codegen.cuda import generate

    def cuda(nan):
        return generate(check_source(ROW_IN_REGISTERS.format(nan=nan), "<test>").kernels[0], "sm_90a").source

    assert "lanes_allreduce" in cuda(False)
    nan_source = cuda(True)
    assert "lanes_allreduce" not in nan_source and nan_source.count(" != ") > cuda(False).count(" != ")
    a, b = torch.arange(64).half(), torch.zeros(1).half()
    a[7] = float("nan")
    build_src(ROW_IN_REGISTERS.format(nan=True))(a, b)
    assert torch.isnan(b).all()
