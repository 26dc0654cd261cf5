"""Constant folding and traversal over the tile IR."""
from tilelang_core.ir import nodes as N
from tilelang_core.ir.arith import as_const, as_int, shape_ints
from tilelang_core.ir.printer import expr_str
from tilelang_core.ir.visitor import transform, walk


def c(v):
    return N.Const(v)


def test_folding_python_semantics():
    assert as_int(N.BinOp("//", c(-7), c(2))) == -4
    assert as_int(N.BinOp("%", c(-7), c(2))) == 1
    assert as_int(N.Call("ceildiv", (c(1000), c(128)))) == 8
    assert as_int(N.BinOp("//", c(1), c(0))) is None


def test_symbolic_stays_unknown():
    m = N.Var("m", kind="symbolic")
    assert as_int(N.BinOp("*", m, c(2))) is None
    assert shape_ints((c(4), m)) is None
    assert shape_ints((c(4), N.BinOp("+", c(1), c(2)))) == (4, 3)


def test_printer_parenthesises_by_precedence():
    m = N.Var("m", kind="symbolic")
    e = N.BinOp("*", N.BinOp("+", m, c(1)), c(2))
    assert expr_str(e) == "(m + 1) * 2"
    assert as_const(N.Compare("<", c(1), c(2))) is True


def test_walk_and_transform_replace_consts():
    buf = N.Buffer("A", (c(4),), "float32", "shared.dyn")
    stmt = N.Store(buf, (N.BinOp("+", c(1), c(2)),), c(0.0))
    assert sum(isinstance(n, N.Const) for n in walk(stmt)) == 3
    out = transform(stmt, lambda n: N.Const(as_const(n)) if isinstance(n, N.BinOp) else n)
    assert out.indices == (N.Const(3),) and out.buffer is buf


def test_children_of_region_are_axes_only():
    from tilelang_core.source import Span
    from tilelang_core.ir.visitor import children

    buf = N.Buffer("S", (c(8),), "float16", "shared.dyn")
    region = N.Region(buf, (N.Axis(c(0), c(8)),), "full", span=Span(1, 0, 1, 1))
    assert [type(x).__name__ for x in children(region)] == ["Axis"]


def test_folding_never_raises_on_extreme_constants():
    from tilelang_core.ir import nodes as N
    from tilelang_core.ir.arith import as_const

    inf, huge = N.Const(float("inf"), "float32"), N.Const(2**4096, "int64")
    for e in (N.UnaryOp("~", N.Const(1.5, "float32")), N.Cast("int32", inf), N.Cast("float32", huge),
              N.Call("ceildiv", (inf, huge)), N.BinOp("**", N.Const(10, "int32"), huge)):
        assert as_const(e) is None
