"""Unswitching a masked T.Parallel fill: when a fill's T.if_then_else condition is affine in the parallel indices,
the iterations of an outer loop on which it holds over the whole tile take the plain branch.

Before (causal flash attention, inside `for k in T.Pipelined(..)`): `for i, j in T.Parallel(128, 128):
scores[i, j] = T.if_then_else(bx * 128 + i >= k * 128 + j, 0, -inf)`.
After (`unswitch_fill`): `if bx * 128 - k * 128 >= 127: scores[i, j] = 0 (every i, j) else: <the masked fill>`: a
block left of the diagonal pays no mask (one compare per iteration instead of one per element).
"""
from __future__ import annotations

import dataclasses

from ...ir import nodes as N
from ...ir.arith import as_int


def unswitch_fill(stmt) -> N.If | None:
    """`if <the condition holds on every element>: <the fill's true branch> else: stmt`, or None when `stmt` is not
    a T.Parallel store of a T.if_then_else whose comparison is affine in the loop's indices."""
    if not isinstance(stmt, N.For) or stmt.kind != "parallel" or not isinstance(stmt.body, N.Store):
        return None
    sel = stmt.body.value
    if not isinstance(sel, N.Select) or not isinstance(sel.cond, N.Compare) or sel.cond.op not in (
            ">=", ">", "<=", "<"):
        return None
    starts, exts = [as_int(s) for s in stmt.starts], [as_int(e) for e in stmt.extents]
    if None in starts or None in exts or min(exts) < 1:
        return None
    big, small = (sel.cond.lhs, sel.cond.rhs) if sel.cond.op in (">=", ">") else (sel.cond.rhs, sel.cond.lhs)
    a, b = _affine(big), _affine(small)
    if a is None or b is None:
        return None
    diff = dict(a)
    for v, c in b.items():
        diff[v] = diff.get(v, 0) - c
    low = diff.pop(1, 0)  # the least value of big - small over the tile, less the outer variables' terms
    for v, s, e in zip(stmt.vars, starts, exts):
        c = diff.pop(v, 0)
        low += min(c * s, c * (s + e - 1))
    if not diff:
        return None  # nothing outside the tile: the condition is the same on every iteration
    outer = None
    for v, c in diff.items():
        term = v if c == 1 else N.BinOp("*", v, N.Const(c))
        outer = term if outer is None else N.BinOp("+", outer, term)
    strict = sel.cond.op in (">", "<")
    whole = N.Compare(">" if strict else ">=", outer, N.Const(-low), span=sel.cond.span)
    plain = dataclasses.replace(stmt, body=dataclasses.replace(stmt.body, value=sel.true_value))
    return N.If(whole, plain, stmt, span=stmt.span)


def _affine(e) -> dict | None:
    """{Var: int coefficient, 1: constant} of an integer expression of + - * by constants, else None."""
    if isinstance(e, N.Const):
        return {1: e.value} if isinstance(e.value, int) and not isinstance(e.value, bool) else None
    if isinstance(e, N.Var):
        return {e: 1} if e.dtype.startswith("int") else None
    if isinstance(e, N.BinOp) and e.op in ("+", "-"):
        a, b = _affine(e.lhs), _affine(e.rhs)
        if a is None or b is None:
            return None
        out = dict(a)
        for v, c in b.items():
            out[v] = out.get(v, 0) + (c if e.op == "+" else -c)
        return out
    if isinstance(e, N.BinOp) and e.op == "*":
        a, b = _affine(e.lhs), _affine(e.rhs)
        if a is None or b is None:
            return None
        k, other = (a[1], b) if set(a) == {1} else (b[1], a) if set(b) == {1} else (None, None)
        return None if k is None else {v: c * k for v, c in other.items()}
    return None
