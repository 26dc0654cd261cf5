"""`T.float16x2(a, b)` builds a vector, which kernels do not have yet: refused at its line instead of being read as
a cast of `a` (which dropped `b`); a scalar dtype called with two values is a bad call."""
from __future__ import annotations

import pytest

import tilelang_core.language as T
from tilelang_core.diagnostics import DiagnosticSink
from tilelang_core.frontend import parse_captured
from tilelang_core.language.dtypes import dtype_lanes


def _kernel(ctor):
    @T.prim_func
    def pack(A: T.Tensor((2,), T.float16), B: T.Tensor((2,), T.float16)):
        with T.Kernel(1, threads=1):
            v = T.alloc_var(T.float16)
            v = ctor(A[0], A[1])
            B[0] = v

    return pack


@pytest.mark.parametrize("ctor, code, fragment", [
    (T.float16x2, "lowering-unsupported", "builds a float16x2 vector value"),
    (T.float16, "bad-arguments", "float16(x) converts one value"),
])
def test_a_dtype_called_with_several_values_is_refused_at_its_line(ctor, code, fragment):
    sink = DiagnosticSink()
    parse_captured(_kernel(ctor).captured, sink)
    (diag,) = [d for d in sink.items if d.is_error]
    assert diag.code == code and fragment in diag.message
    assert "ctor(A[0], A[1])" in diag.message


def test_dtype_lanes():
    assert dtype_lanes("float16x2") == 2 and dtype_lanes(T.int8x4) == 4 and dtype_lanes("float32") == 1
    assert dtype_lanes("nonsense") == 1
