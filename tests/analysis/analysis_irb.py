"""A tiny builder for hand-written tile IR in analysis tests (one statement per source line)."""
from __future__ import annotations

from tilelang_core.diagnostics import DiagnosticSink
from tilelang_core.ir import nodes as N
from tilelang_core.source import Span

_line = [100]


def sp(line: int | None = None) -> Span:
    """A fresh one-line span (or one at `line`)."""
    if line is None:
        _line[0] += 1
        line = _line[0]
    return Span(line, 4, line, 20)


def c(v, dtype="int32"):
    return N.Const(v, dtype)


def ex(e):
    return e if not isinstance(e, (int, float)) else c(e)


def var(name, kind="loop"):
    return N.Var(name, "int32", kind)


def add(a, b):
    return N.BinOp("+", ex(a), ex(b))


def mul(a, b):
    return N.BinOp("*", ex(a), ex(b))


def buf(name, shape, dtype="float16", scope="shared.dyn", line=None):
    return N.Buffer(name, tuple(ex(d) for d in shape), dtype, scope, sp(line))


def full(b):
    return N.Region(b, tuple(N.Axis(c(0), d) for d in b.shape), "full", sp())


def sl(b, *axes):
    """Region: each axis is (start, extent) for a slice or a single index (a point axis)."""
    ax = []
    for a in axes:
        if isinstance(a, tuple):
            ax.append(N.Axis(ex(a[0]), ex(a[1]), True))
        else:
            ax.append(N.Axis(ex(a), c(1), False))
    kind = "slice" if any(x.sliced for x in ax) else "point"
    return N.Region(b, tuple(ax), kind, sp())


def alloc(b):
    return N.Allocate(b, None, b.span)


def loop(vars_, extents, body, kind="serial", **kw):
    vs = tuple(vars_) if isinstance(vars_, (list, tuple)) else (vars_,)
    exts = tuple(ex(e) for e in (extents if isinstance(extents, (list, tuple)) else (extents,)))
    starts = kw.pop("starts", tuple(c(0) for _ in vs))
    body = N.SeqStmt(tuple(body), None) if isinstance(body, list) else body
    return N.For(vs, tuple(ex(s) for s in starts), exts, kind, body, span=sp(), **kw)


def load(b, *idx):
    return N.Load(b, tuple(ex(i) for i in idx), sp())


def store(b, idx, value=0.0):
    return N.Store(b, tuple(ex(i) for i in idx), ex(value) if not isinstance(value, float) else c(value, "float32"),
                   sp())


def kernel(stmts, grid=(4, 4), threads=(128,), params=(), name="k"):
    bvars = tuple(var(n, "block") for n in ("bx", "by", "bz")[: len(grid)])
    launch = N.Launch(tuple(ex(g) for g in grid), tuple(ex(t) for t in threads), bvars,
                      N.SeqStmt(tuple(stmts(*bvars) if callable(stmts) else stmts)), sp(50))
    return N.PrimFunc(name, tuple(params), N.SeqStmt((launch,)), span=sp(40), name_span=sp(40))


def run(func, targets=("sm_90a",)):
    """Analyze one kernel; return (sink items, facts)."""
    from tilelang_core.analysis import analyze

    sink = DiagnosticSink()
    facts = analyze([func], targets, sink)
    return sink.items, facts


def codes(func, targets=("sm_90a",), dataflow=False):
    """The diagnostic codes an analysis of one kernel reports (sorted). The hand-built kernels of the rule tests
    leave tiles uninitialised and outputs partly written, so the data-flow codes only count with `dataflow=True`."""
    from tilelang_core.codes import CODES

    return sorted(d.code for d in run(func, targets)[0] if dataflow or CODES[d.code].area != "dataflow")
