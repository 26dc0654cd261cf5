"""Fast-math intrinsics (T.__exp, T.__log, T.__sin, ...) take float16/bfloat16/float32/float64 only: a TypeError
naming the dtype, in a kernel (when @T.prim_func runs, code fast-math-dtype) and on a host value; on TVM IR objects
outside a kernel they are refused (tilelang_core builds no TVM IR on the host)."""
from __future__ import annotations

import pytest

import tilelang_core.language as T
from tilelang_core.compat import UnsupportedFeatureError
from tilelang_core.diagnostics import CompileError, DiagnosticSink
from tilelang_core.frontend import parse_captured
from tilelang_core.runtime.jit import to_ir


def _kernel(dtype):
    @T.prim_func
    def fast(A: T.Tensor((8,), dtype), B: T.Tensor((8,), T.float32)):
        with T.Kernel(1, threads=8) as bx:
            for i in T.Parallel(8):
                B[i] = T.__exp(A[i])

    return fast


@pytest.mark.parametrize("dtype", ["int32", "uint8", "float8_e4m3fn", "bool"])
def test_a_fast_math_intrinsic_of_a_non_float_is_a_type_error_in_the_kernel(dtype):
    sink = DiagnosticSink()
    parse_captured(_kernel(dtype).captured, sink)
    (diag,) = [d for d in sink.items if d.is_error]
    assert diag.code == "fast-math-dtype"
    assert f"T.__exp only supports floating-point inputs, but got {dtype}" in diag.message
    with pytest.raises(TypeError):
        raise CompileError([diag])


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_float_inputs_are_taken(dtype):
    assert to_ir(_kernel(dtype)).name == "fast"


class _HostValue:
    """A value that carries a dtype, as a TVM expression does."""

    def __init__(self, dtype):
        self.dtype = dtype


def test_host_values_are_checked_like_the_kernel():
    with pytest.raises(TypeError, match=r"T\.__log only supports floating-point inputs, but got int64"):
        T.__log(_HostValue("int64"))
    with pytest.raises(RuntimeError, match="can only be used inside"):
        T.__log(_HostValue("float32"))


@pytest.mark.tvm
def test_tvm_objects_outside_a_kernel_are_refused_not_built():
    from tvm import tirx

    with pytest.raises(TypeError, match="but got int32"):
        T.__sin(tirx.Var("v", "int32"))
    with pytest.raises(UnsupportedFeatureError, match=r"T\.__sin on TVM IR objects outside a kernel"):
        T.__sin(tirx.Var("v", "float32"))
