"""Fast-math intrinsics (T.__exp, T.__log, T.__sin, ...) take float16/bfloat16/float32/float64 only: a TypeError
naming the dtype, in a kernel (when @T.prim_func runs, code fast-math-dtype) and on a host value; on a TVM
expression outside a kernel they build TileLang's call (`Call(tl.__exp, x)` in x's dtype), other builtins refuse."""
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
@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_on_a_tvm_expression_outside_a_kernel_the_call_is_built(dtype):
    from tvm import ir, tirx

    with pytest.raises(TypeError, match="but got int32"):
        T.__sin(tirx.Var("v", "int32"))
    call = T.__sin(tirx.Var("v", dtype) + T.__exp(tirx.Var("w", dtype)))
    assert isinstance(call, ir.Call) and str(call.ty) == dtype
    assert "tl.__sin" in str(call) and "tl.__exp" in str(call)


@pytest.mark.tvm
def test_other_builtins_on_tvm_objects_are_refused():
    from tvm import tirx

    with pytest.raises(UnsupportedFeatureError, match=r"T\.view on TVM IR objects outside a kernel"):
        T.view(tirx.decl_buffer((16, 32), "float16", name="A"), (16, 16), dtype=T.float32)


@pytest.mark.tvm
def test_the_alias_gives_tvm_the_expression_names_tilelang_has():
    """While the alias is installed: `tirx.Call` and `.dtype` on expressions, as TileLang's TVM has them."""
    from tilelang_core.compat.tvm import patch_tvm, unpatch_tvm
    import tvm

    had = hasattr(tvm.tirx, "Call")
    patch_tvm()
    try:
        call = T.__exp(tvm.tirx.Var("v", "bfloat16"))
        assert isinstance(call, tvm.tirx.Call) and call.dtype == "bfloat16"
    finally:
        if not had:
            unpatch_tvm()
            assert not hasattr(tvm.tirx, "Call") and not hasattr(call, "dtype")
