"""IR to TileLang-style Python text. `expr_str` renders expressions (used in messages and hover)."""
from __future__ import annotations

from . import nodes as N

_PREC = {"or": 1, "and": 2, "not": 3, "cmp": 4, "|": 5, "^": 6, "&": 7, "<<": 8, ">>": 8, "+": 9, "-": 9,
         "*": 10, "/": 10, "//": 10, "%": 10, "neg": 11, "**": 12}


def expr_str(e, parent_prec: int = 0) -> str:
    """Render an expression as Python source (minimal parentheses)."""
    if isinstance(e, N.Const):
        return repr(e.value) if not isinstance(e.value, float) or e.value == e.value else "T.float32('nan')"
    if isinstance(e, N.Var):
        return e.name
    if isinstance(e, N.BinOp):
        p = _PREC.get(e.op, 9)
        s = f"{expr_str(e.lhs, p)} {e.op} {expr_str(e.rhs, p + 1)}"
        return f"({s})" if p < parent_prec else s
    if isinstance(e, N.Compare):
        p = _PREC["cmp"]
        s = f"{expr_str(e.lhs, p + 1)} {e.op} {expr_str(e.rhs, p + 1)}"
        return f"({s})" if p < parent_prec else s
    if isinstance(e, N.BoolOp):
        p = _PREC[e.op]
        s = f" {e.op} ".join(expr_str(v, p + 1) for v in e.values)
        return f"({s})" if p < parent_prec else s
    if isinstance(e, N.UnaryOp):
        if e.op == "not":
            return f"not {expr_str(e.operand, _PREC['not'])}"
        return f"{e.op}{expr_str(e.operand, _PREC['neg'])}"
    if isinstance(e, N.Call):
        return f"T.{e.name}({', '.join(expr_str(a) for a in e.args)})"
    if isinstance(e, N.Cast):
        return f"T.cast({expr_str(e.value)}, {e.dtype!r})"
    if isinstance(e, N.Select):
        return f"T.if_then_else({expr_str(e.cond)}, {expr_str(e.true_value)}, {expr_str(e.false_value)})"
    if isinstance(e, N.Load):
        return f"{e.buffer.name}[{', '.join(expr_str(i) for i in e.indices)}]"
    return f"<{type(e).__name__}>"


def shape_str(shape) -> str:
    """A shape as 'AxB' text (symbolic dims printed as expressions)."""
    return "x".join(expr_str(d) for d in shape) if shape else "scalar"
