"""Float operations no simplifier may fold: `x * 0` and `x - x` are NaN, not 0, when x is inf or NaN (IEEE-754).

TVM's simplifier folds both for every dtype; a backend lowers such a float operation as the opaque IEEE operation
`ieee_fold_guard` names (`T.ieee_mul` / `T.ieee_sub`, round to nearest: the same value, which nothing folds).
"""
from __future__ import annotations

from dataclasses import fields, is_dataclass

from .arith import as_const
from .nodes import BinOp, Buffer, Var


def ieee_fold_guard(e: BinOp) -> str | None:
    """"ieee_mul" for a product with a literal zero operand, "ieee_sub" for a difference of an expression with
    itself, else None (on floats these must be computed; integer ones may fold, the caller checks the dtype)."""
    if e.op == "*":
        a, b = as_const(e.lhs), as_const(e.rhs)
        return "ieee_mul" if (a is None) != (b is None) and 0 in (a, b) else None
    if e.op == "-" and as_const(e.lhs) is None and same_expr(e.lhs, e.rhs):
        return "ieee_sub"
    return None


def same_expr(a, b) -> bool:
    """True when two expressions are the same tree (spans aside; variables and buffers by identity)."""
    if a is b:
        return True
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return len(a) == len(b) and all(same_expr(x, y) for x, y in zip(a, b))
    if isinstance(a, (Var, Buffer)) or not is_dataclass(a) or type(a) is not type(b):
        return a == b
    return all(same_expr(getattr(a, f.name), getattr(b, f.name)) for f in fields(a) if f.name != "span")
