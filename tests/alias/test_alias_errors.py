"""`tilelang.errors.enrich_error`, `tilelang.ir`'s span helpers (TVM-IR only: refused) and
`tvm.tirx.stmt_functor.post_order_visit` over a kernel's tile IR, under the alias."""
from __future__ import annotations


import pytest


def test_enrich_error_renders_the_marked_line(tilelang, tmp_path):
    from tilelang.errors import _MARKER_RE, enrich_error

    src = tmp_path / "a dir" / "kernel.py"
    src.parent.mkdir()
    src.write_text("one\n    two\nthree\n")
    exc = RuntimeError(f"bad layout\n  --> {src}:2:5")
    assert enrich_error(exc) is exc
    assert str(exc).splitlines() == ["bad layout", f"  --> {src}:2:5", " 2 |     two", "   |     ^"]
    m = _MARKER_RE.search("x\n  --> C:\\work\\k.py:21")
    assert (m.group("file"), m.group("line"), m.group("col")) == ("C:\\work\\k.py", "21", None)


@pytest.mark.parametrize("message", ["plain", "marker to a missing file\n  --> /no/such/file.py:3:1"])
def test_enrich_error_leaves_other_errors_alone(tilelang, message):
    from tilelang.errors import enrich_error

    exc = ValueError(message)
    assert enrich_error(exc) is exc and str(exc) == message


def test_ir_span_helpers_import_and_refuse(tilelang):
    from tilelang.ir import make_span, span_coverage
    from tilelang_core.compat import UnsupportedFeatureError

    with pytest.raises(UnsupportedFeatureError, match="tilelang.ir.make_span"):
        make_span("k.py", 3)
    with pytest.raises(UnsupportedFeatureError):
        span_coverage(None)


def test_post_order_visit_walks_the_tile_ir(tilelang):
    import tilelang.language as T
    from tvm.tirx.stmt_functor import post_order_visit

    @T.prim_func
    def main(A: T.Tensor((8,), "float32"), B: T.Tensor((8,), "float32")):
        with T.Kernel(1, threads=8):
            for i in T.Parallel(8):
                B[i] = A[i] + 1.0

    seen = []
    post_order_visit(main.body, seen.append)
    names = [type(n).__name__ for n in seen]
    assert seen[-1] is main.body
    assert names.index("Load") < names.index("Store") < names.index("For")
