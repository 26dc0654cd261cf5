"""T.extract_lane: TileLang's argument errors on the host (read off the values: no IR is built), and in a kernel a
scalar value is TileLang's ValueError while a vector one is refused (kernels have no vector-typed values yet)."""
from __future__ import annotations

import importlib

import pytest

from tilelang_core.check import check_source


@pytest.fixture
def T():
    from tilelang_core import alias

    alias.uninstall_alias()
    alias.install_alias(force=True)
    yield importlib.import_module("tilelang.language")
    alias.uninstall_alias()


def test_host_arguments_that_can_never_be_right(T):
    with pytest.raises(TypeError, match="expects a PrimExpr"):
        T.extract_lane(1, 0)
    with pytest.raises(TypeError, match="expects a PrimExpr"):
        T.extract_lane(T.bfloat16x2, 0)  # a dtype is no value
    with pytest.raises(ValueError, match="expects a vector expression"):
        T.extract_lane(T.dynamic("n"), 0)  # a symbolic size is an int32 scalar


@pytest.mark.tvm
def test_host_checks_on_tvm_values(T):
    from tvm import tirx

    from tilelang_core.compat import UnsupportedFeatureError

    vector = tirx.Var("vector", "bfloat16x2")
    with pytest.raises(ValueError, match="expects a vector expression"):
        T.extract_lane(tirx.Var("scalar", "bfloat16"), 0)
    with pytest.raises(TypeError, match="compile-time integer"):
        T.extract_lane(vector, tirx.Var("lane", "int32"))
    for lane in (-1, 2, tirx.IntImm("int32", 2)):
        with pytest.raises(IndexError, match="out of bounds"):
            T.extract_lane(vector, lane)
    with pytest.raises(UnsupportedFeatureError, match="on TVM IR objects outside a kernel is not supported"):
        T.extract_lane(vector, tirx.IntImm("int32", 1))  # valid: the Shuffle it stands for is TVM IR


KERNEL = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((2,), T.float16), B: T.Tensor((2,), T.float16)):
    with T.Kernel(1, threads=1):
        B[0] = T.extract_lane({value}, 0)
"""


def test_in_a_kernel_a_scalar_is_an_invalid_value():
    (err,) = [d for d in check_source(KERNEL.format(value="A[0]"), "k.py").diagnostics if d.is_error]
    assert err.code == "invalid-value" and "expects a vector expression" in err.message and err.span.line == 7


def test_in_a_kernel_a_value_of_unknown_dtype_is_no_error():
    text = """
import tilelang.language as T

def make(vector_dtype):
    @T.prim_func
    def k(A: T.Tensor((2,), T.float16), B: T.Tensor((2,), T.float16)):
        with T.Kernel(1, threads=1):
            packed = T.alloc_var(vector_dtype)
            B[0] = T.extract_lane(packed, 0)
    return k
"""
    codes = [d.code for d in check_source(text, "k.py").diagnostics if d.is_error]
    assert codes == []  # vector_dtype is unknown to the checker: it says nothing of it
