"""What the parser can tell about an IR expression without evaluating it: its affine form, the folded
difference of two extents, its dtype.
"""
from __future__ import annotations

from ..ir import nodes as N
from ..ir.arith import as_const
from ..language.dtypes import dtype_bits


def difference(a: N.Expr, b: N.Expr) -> N.Expr:
    """a - b, folded to a constant when the two are affine in the same variables (e.g. (i+1)*64 - i*64)."""
    la, lb = linear(a), linear(b)
    if la is not None and lb is not None:
        diff = dict(la)
        for k, c in lb.items():
            diff[k] = diff.get(k, 0) - c
        terms = {k: c for k, c in diff.items() if c != 0}
        if set(terms) <= {None}:
            return N.Const(terms.get(None, 0))
    if isinstance(b, N.Const) and b.value == 0:
        return a
    return N.BinOp("-", a, b)


def linear(e, _depth: int = 0):
    """An affine form {key: coeff} (key None = constant) of an int expression, or None."""
    if _depth > 30:
        return None
    c = as_const(e)
    if isinstance(c, int) and not isinstance(c, bool):
        return {None: c}
    if isinstance(e, N.Var):
        return {("var", id(e)): 1}
    if isinstance(e, N.UnaryOp) and e.op == "-":
        inner = linear(e.operand, _depth + 1)
        return None if inner is None else {k: -v for k, v in inner.items()}
    if isinstance(e, N.BinOp) and e.op in ("+", "-"):
        la, lb = linear(e.lhs, _depth + 1), linear(e.rhs, _depth + 1)
        if la is None or lb is None:
            return None
        sign = 1 if e.op == "+" else -1
        out = dict(la)
        for k, v in lb.items():
            out[k] = out.get(k, 0) + sign * v
        return out
    if isinstance(e, N.BinOp) and e.op == "*":
        for x, y in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            k = as_const(y)
            if isinstance(k, int) and not isinstance(k, bool):
                inner = linear(x, _depth + 1)
                return None if inner is None else {key: v * k for key, v in inner.items()}
    if isinstance(e, (N.BinOp, N.Call, N.Load)):
        from ..ir.printer import expr_str

        return {("opaque", expr_str(e)): 1}
    return None


def expr_dtype(e, default: str = "int32") -> str:
    """Best-effort dtype of an IR expression."""
    if isinstance(e, (N.Const, N.Var)):
        return e.dtype
    if isinstance(e, N.Load):
        return e.buffer.dtype
    if isinstance(e, N.Cast):
        return e.dtype
    if isinstance(e, (N.Compare, N.BoolOp)) or isinstance(e, N.UnaryOp) and e.op == "not":
        return "bool"
    if isinstance(e, N.UnaryOp):
        return expr_dtype(e.operand, default)
    if isinstance(e, N.Call):
        if e.dtype:
            return e.dtype
        return expr_dtype(e.args[0], default) if e.args else default
    if isinstance(e, N.Select):
        return expr_dtype(e.true_value, default)
    if isinstance(e, N.BinOp):
        a, b = expr_dtype(e.lhs, default), expr_dtype(e.rhs, default)
        if int_bits(b) > int_bits(a) > 0 and not isinstance(e.rhs, N.Const):  # two integers: the wider wins, as in TIR
            return b
        if _float_bits(b) > _float_bits(a) > 0 and not isinstance(e.rhs, N.Const):  # two floats: likewise
            return b
        if isinstance(e.lhs, N.Const) and not isinstance(e.rhs, N.Const):
            return b if not (a.startswith("float") and not b.startswith(("float", "bfloat"))) else a
        if a.startswith(("float", "bfloat")) or not b.startswith(("float", "bfloat")):
            return a
        return b
    return default


def int_bits(dtype: str) -> int:
    """The width of an integer dtype, 0 for any other."""
    digits = "".join(ch for ch in dtype if ch.isdigit())
    return int(digits) if dtype.startswith(("int", "uint")) and digits else 0


def _float_bits(dtype: str) -> int:
    """The width of a float dtype, 0 for any other."""
    return (dtype_bits(dtype) or 0) if dtype.startswith(("float", "bfloat")) else 0
