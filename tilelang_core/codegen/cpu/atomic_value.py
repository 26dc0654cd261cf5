"""`T.atomic_add / atomic_max / atomic_min / atomic_or(dst, value, return_prev=True)` read as a value, and the
element update of each, on the CPU backend.

The statement that reads it is preceded by `old = dst; dst = old (op) value` and reads `old` instead. A block's
threads run one after another here (and blocks too, when a kernel has atomics), so the read-modify-write is
atomic and each caller gets a distinct previous value, as on the GPU.
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.visitor import transform, walk
from .expr import LoweringError

VALUE_ATOMICS = frozenset({"atomic_add", "atomic_max", "atomic_min", "atomic_or"})  # Call(name, (dst, value))


def updated(name: str, old, value) -> N.Expr:
    """The new value of an element `old` after atomic `name` with `value` (converted to the element's dtype)."""
    dtype = old.buffer.dtype if isinstance(old, N.Load) else old.dtype
    v = N.Cast(dtype, value)
    if name == "atomic_add":
        return N.BinOp("+", old, v)
    if name == "atomic_or":
        return N.BinOp("|", old, v)
    return N.Call(name[len("atomic_"):], (old, v), dtype)


def _is_value_atomic(n) -> bool:
    return isinstance(n, N.Call) and n.name in VALUE_ATOMICS and len(n.args) == 2 and isinstance(n.args[0], N.Load)


def own_exprs(s) -> tuple:
    """The expressions a statement evaluates itself (not those of the statements nested in it)."""
    if isinstance(s, N.Store):
        return (*s.indices, s.value)
    if isinstance(s, (N.LetStmt, N.Evaluate)):
        return (s.value,)
    if isinstance(s, (N.If, N.While)):
        return (s.cond,)
    if isinstance(s, N.For):
        return (*s.starts, *s.extents)
    return ()


def reads_value_atomic(s) -> bool:
    """True when a statement's own expressions read an atomic's previous value."""
    return any(_is_value_atomic(n) for e in own_exprs(s) for n in walk(e))


def hoist_value_atomics(s, fresh) -> list:
    """`s` as tile-IR statements: for each atomic it reads (innermost first, left to right) a let of the element's
    old value and the store of old + value, then `s` reading the lets. `fresh(name)` names the lets."""
    if not isinstance(s, (N.Store, N.LetStmt, N.Evaluate, N.If)):
        raise LoweringError("T.atomic_add(..., return_prev=True) is read in a loop bound or `while` condition; "
                            "bind it to a variable first (`pos = T.atomic_add(..., return_prev=True)`)",
                            getattr(s, "span", None))
    if isinstance(s, N.Evaluate) and _is_value_atomic(s.value):  # the statement form: only the update
        dst, value = s.value.args
        return [N.Store(dst.buffer, dst.indices, updated(s.value.name, dst, value), s.span)]
    prefix: list = []

    def hoist(n):
        if not _is_value_atomic(n):
            return n
        dst, value = n.args
        old = N.Var(fresh("prev").name, dst.buffer.dtype, "let", n.span)
        prefix.append(N.LetStmt(old, dst, n.span))
        prefix.append(N.Store(dst.buffer, dst.indices, updated(n.name, old, value), n.span))
        return old

    if isinstance(s, N.Store):
        s = N.Store(s.buffer, tuple(transform(i, hoist) for i in s.indices), transform(s.value, hoist), s.span)
    elif isinstance(s, N.If):
        s = N.If(transform(s.cond, hoist), s.then_body, s.else_body, s.span)
    else:
        value = transform(s.value, hoist)
        if isinstance(s, N.Evaluate) and isinstance(value, N.Var):  # the previous value is not used
            return prefix
        s = type(s)(s.var, value, s.span) if isinstance(s, N.LetStmt) else N.Evaluate(value, s.span)
    return prefix + [s]
