"""Reading a builtin call's bound arguments in its handler: evaluated values, compile-time ints and bools,
shapes as IR expressions.
"""
from __future__ import annotations

import ast

from ..ir import nodes as N
from ..ir.arith import as_int
from .expr_info import expr_dtype
from .kernel_errors import KernelError, check_elements, check_value
from .values import Unknown, to_expr


def arg(p, b: dict, name: str):
    """The evaluated value of a bound argument (defaults are returned as they are)."""
    v = b.get(name)
    return p.ev.eval(v) if isinstance(v, ast.AST) else v


def const_int(p, b: dict, name: str, what: str) -> int | None:
    """A bound argument that must be a compile-time int (None when it depends on unknown factory values)."""
    v = arg(p, b, name)
    if v is None or depends_on_unknown(v):
        return None
    n = v if isinstance(v, int) and not isinstance(v, bool) else as_int(v) if to_expr(v) is not None else None
    if n is None:
        raise KernelError("bad-arguments", f"{what} must be a compile-time integer (got `{src_text(b.get(name))}`)",
                          b.get(name) if isinstance(b.get(name), ast.AST) else None)
    return n


def const_bool(p, b: dict, name: str, what: str) -> bool:
    """A bound argument that must be a compile-time bool."""
    v = arg(p, b, name)
    if isinstance(v, (bool, int)) or v is None or depends_on_unknown(v):
        return bool(v) if not depends_on_unknown(v) else False
    c = as_int(v) if to_expr(v) is not None else None
    if c is None:
        raise KernelError("bad-arguments", f"{what} must be True or False at compile time", b.get(name))
    return bool(c)


def depends_on_unknown(v) -> bool:
    """True when a value is (or is built from) something the frontend could not evaluate."""
    from ..ir.visitor import walk

    if isinstance(v, Unknown):
        return True
    if isinstance(v, N.Var):
        return v.kind == "symbolic"
    if isinstance(v, (N.BinOp, N.Call, N.UnaryOp, N.Cast, N.Select, N.Compare, N.BoolOp)):
        return any(isinstance(n, N.Var) and n.kind == "symbolic" for n in walk(v))
    return False


def shape_of(p, value, node) -> tuple:
    """A shape argument (int, expr, tuple or list of them) as a tuple of IR expressions."""
    dims = value if isinstance(value, (tuple, list)) else (value,)
    out = []
    for d in dims:
        if d is None:
            d = Unknown(src_text(node))
        e = to_expr(p.ev.operand(d), p.span(node))
        if e is None:
            raise KernelError("bad-arguments", f"shape entries must be integers (got `{src_text(node)}`)", node)
        if isinstance(d, float) or expr_dtype(e).startswith(("float", "bfloat")):
            shown = repr(d) if isinstance(d, float) else src_text(node)
            raise KernelError("bad-arguments", f"shape entries must be integers, but one is {shown} in "
                              f"`{src_text(node)}`; use `//` for integer division", node)
        # unused buffers may be empty
        out.append(check_value(e, node, f"a shape entry of `{src_text(node)}`", minimum=0))
    check_elements(f"`{src_text(node)}`", out, node)
    return tuple(out)


def src_text(node) -> str:
    """A node's source text for a message (`?` when it cannot be unparsed)."""
    try:
        return ast.unparse(node) if isinstance(node, ast.AST) else repr(node)
    except Exception:  # noqa: BLE001
        return "?"
