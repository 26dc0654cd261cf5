"""Failures inside the lowering become internal-error diagnostics at the construct, never raw TVM text."""
import pytest

from tilelang_core.diagnostics import CompileError
from tilelang_core.ir import nodes as N
from tilelang_core.lowering import user_errors
from tilelang_core.source import Span

FUNC = N.PrimFunc("k", (), N.SeqStmt(()), span=Span(3, 0, 3, 10))
STORE_SPAN = Span(7, 8, 7, 30)


def _lower_construct(exc):
    store = N.Evaluate(N.Const(0), STORE_SPAN)  # a node local to the failing frame  # noqa: F841
    raise exc


@pytest.mark.parametrize("exc", [KeyError("x"), ValueError("Check failed: (extent >= 0) is false: negative"),
                                 RuntimeError("InternalError: Check failed: a == b")])
def test_internal_failures_name_the_construct(exc):
    with pytest.raises(CompileError) as info:
        with user_errors(FUNC, "sm_90a"):
            _lower_construct(exc)
    (d,) = info.value.diagnostics
    assert d.code == "internal-error" and d.is_error and "please report" in d.message
    assert d.span == STORE_SPAN
    assert "Check failed" not in d.message


def test_user_value_errors_pass_through():
    with pytest.raises(CompileError) as info:
        with user_errors(FUNC, "cpu"):
            raise ValueError("T.copy extents differ")
    assert info.value.diagnostics[0].message == "T.copy extents differ"
