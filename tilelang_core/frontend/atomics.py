"""Element and tile atomics beside T.atomic_add: `T.atomic_max` / `T.atomic_min` / `T.atomic_or` (one element, its
previous value with return_prev=True, or a whole region element by element) and `T.atomic_load` /
`T.atomic_store` (an element read or written with a memory order; memory_order.py checks the order at the call).

One element: `Evaluate(Call(name, (dst Load, value)))`, or the Call itself as a value (return_prev). A region:
a serial loop of those over its elements (max, min and or are idempotent, so every thread may run it).
"""
from __future__ import annotations

import ast

from ..ir import nodes as N
from ..ir.arith import as_int
from .handler_args import const_bool
from .kernel_errors import KernelError
from .regions import explicit_region, region_of, value_region

def _head(region: N.Region) -> N.Load:
    return N.Load(region.buffer, tuple(a.start for a in region.axes), region.span)


def h_atomic_update(p, b, node, short):
    """T.atomic_max / atomic_min / atomic_or(dst, value, memory_order=None, return_prev=False)."""
    dst = region_of(p, b["dst"])
    prev = const_bool(p, b, "return_prev", "return_prev")
    span = p.span(node)
    value = _value(p, b["value"])
    if dst.kind == "point" and not isinstance(value, N.Region):
        call = N.Call(short, (_head(dst), value), dst.buffer.dtype, span)
        if prev:
            return call
        p.emit(N.Evaluate(call, span))
        return None
    if prev:
        raise KernelError("bad-arguments", f"return_prev=True of T.{short} gives one element's previous value; "
                          "call it on one element (`buf[i]`)", node)
    if dst.kind == "point":  # a head address: the region the value covers from there
        dst = explicit_region(dst, value)
    _region_update(p, short, dst, value, span)
    return None


def _value(p, vnode):
    """The value operand: a region (buffer or slice) or a scalar expression."""
    v = p.ev.eval(vnode)
    if isinstance(v, N.Buffer) and v.scope != "local.var":
        return value_region(v, p.span(vnode))
    if isinstance(vnode, ast.Subscript) and isinstance(p.ev.eval(vnode.value), N.Buffer) and any(
            isinstance(i, ast.Slice) for i in (vnode.slice.elts if isinstance(vnode.slice, ast.Tuple) else
                                               [vnode.slice])):
        return region_of(p, vnode)
    return p.ev.scalar_value(v, vnode)


def _region_update(p, short: str, dst: N.Region, value, span) -> None:
    """dst[...] (op)= value[...] (or the scalar value) element by element."""
    d_axes = [a for a in dst.axes if a.sliced] or list(dst.axes)
    extents = [a.extent for a in d_axes]
    if isinstance(value, N.Region):
        v_axes = [a for a in value.axes if a.sliced]
        v_ext = [as_int(a.extent) for a in v_axes]
        if len(v_axes) != len(d_axes) or any(x is not None and y is not None and x != y
                                             for x, y in zip(v_ext, (as_int(e) for e in extents))):
            raise KernelError("bad-arguments", f"T.{short} of a region needs a value region of the same shape "
                              f"({len(d_axes)} dims) or a scalar", None, span=span)
    loop_vars = tuple(N.Var(f"a{k}", "int32", "loop", span) for k in range(len(extents)))

    def at(region, axes):
        it = iter(loop_vars)
        return tuple((N.BinOp("+", a.start, next(it)) if as_int(a.start) != 0 else next(it)) if a in axes
                     else a.start for a in region.axes)

    target = N.Load(dst.buffer, at(dst, d_axes), span)
    v = N.Load(value.buffer, at(value, [a for a in value.axes if a.sliced]), span) if isinstance(
        value, N.Region) else value
    body = N.Evaluate(N.Call(short, (target, v), dst.buffer.dtype, span), span)
    p.emit(N.For(loop_vars, tuple(N.Const(0) for _ in loop_vars), tuple(extents), "serial", body, span=span))


def h_atomic_load(p, b, node, short):
    """T.atomic_load(src, memory_order="seq_cst"): the element's value."""
    src = region_of(p, b["src"])
    if src.kind != "point":
        raise KernelError("bad-arguments", "T.atomic_load reads one element (`buf[i]`)", node)
    return _head(src)


def h_atomic_store(p, b, node, short):
    """T.atomic_store(dst, src, memory_order="seq_cst"): the element written."""
    dst = region_of(p, b["dst"])
    if dst.kind != "point":
        raise KernelError("bad-arguments", "T.atomic_store writes one element (`buf[i]`)", node)
    head = _head(dst)
    p.emit(N.Store(dst.buffer, head.indices, p.ev.scalar(b["src"]), p.span(node)))


ATOMIC_HANDLERS = {"atomic_max": h_atomic_update, "atomic_min": h_atomic_update, "atomic_or": h_atomic_update,
                   "atomic_load": h_atomic_load, "atomic_store": h_atomic_store}
