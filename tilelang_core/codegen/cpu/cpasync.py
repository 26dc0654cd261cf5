"""`T.ptx_cp_async(T.access_ptr(dst), T.access_ptr(src), n[, predicate])` on the CPU backend: one thread copies n
consecutive elements (row-major from each head, as the bytes lie in memory) from global into shared memory, zeros
when the predicate is false. The copy is done when the statement ends, so `T.ptx_commit_group` /
`T.ptx_wait_group` have nothing to wait for, and `T.cp_async_barrier_noinc` is a plain arrival (cpu/mbarrier.py).
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from .expr import LoweringError, as_bool, cast, const, index_expr


def cp_async(ctx, call: N.Call):
    """The current thread's copy of one T.ptx_cp_async (`ctx` is the CpuLowering)."""
    if len(call.args) not in (3, 4) or not all(_is_ptr(a) for a in call.args[:2]):
        raise LoweringError("T.ptx_cp_async takes (T.access_ptr(shared element), T.access_ptr(global element), "
                            "num_elems[, predicate])", call.span)
    n = as_int(call.args[2])
    if n is None or n <= 0:
        raise LoweringError("T.ptx_cp_async needs a positive compile-time number of elements", call.span)
    tirx = ctx.tirx
    dst, src = (a.args[0] for a in call.args[:2])
    dbuf, sbuf = ctx.buffer(dst.buffer, call.span), ctx.buffer(src.buffer, call.span)
    e = ctx.fresh("e")
    ctx.analyzer.bind(e, ctx.ir.Range.from_min_extent(0, const(n, "int32")))
    value = cast(ctx.guarded_load(sbuf, _element(ctx, src, sbuf, e)), str(dbuf.ty.dtype))
    if len(call.args) == 4:
        value = tirx.Select(as_bool(ctx.expr(call.args[3])), value, const(0, str(dbuf.ty.dtype)))
    store = ctx.guarded_store(dbuf, _element(ctx, dst, dbuf, e), value)
    return tirx.For(e, const(0, "int32"), const(n, "int32"), tirx.ForKind.SERIAL, store)


def _element(ctx, head: N.Load, buf, e) -> list:
    """The indices of the element `e` places after `head` in row-major order."""
    tirx = ctx.tirx
    shape = [index_expr(d) for d in buf.ty.shape]
    idx = [ctx.index(i) for i in head.indices] or [const(0, "int32")]
    flat = idx[0]
    for i, d in zip(idx[1:], shape[1:]):
        flat = flat * d + i
    flat = flat + e
    out = []
    for d in reversed(shape[1:]):
        out.append(ctx.analyzer.simplify(tirx.floormod(flat, d)))
        flat = tirx.floordiv(flat, d)
    return [ctx.analyzer.simplify(flat)] + out[::-1]


def _is_ptr(a) -> bool:
    return isinstance(a, N.Call) and a.name == "access_ptr" and a.args and isinstance(a.args[0], N.Load)
