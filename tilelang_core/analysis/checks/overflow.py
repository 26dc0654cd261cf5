"""Index overflow: int32 arithmetic that exceeds 2**31 - 1 for the instance's sizes, in values that the real
TileLang keeps in 32 bits: scalars bound by assignment (`offset = bx * stride`), values stored into int32 local
variables, and loop bounds. (Buffer indices themselves are widened to int64 when their bound is known to overflow.)
Only exact ranges count: each variable appears once and is a block, thread or loop index with a known range."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.printer import expr_str
from ..bounds import bound
from ..fastwalk import walk
from ..walker import Ctx, rule

INT32_MAX, INT32_MIN = 2**31 - 1, -(2**31)
_EXACT_OPS = ("+", "-", "*", "<<")
_INDEX_KINDS = ("block", "loop", "thread")


@rule(N.LetStmt)
def check_let_overflow(s: N.LetStmt, ctx: Ctx) -> None:
    """`name = expr` in a kernel: an int32 value that overflows."""
    if _is_int32(s.var.dtype):
        _check(s.value, ctx, s.span, f"`{s.var.name}`")


@rule(N.Store)
def check_store_overflow(s: N.Store, ctx: Ctx) -> None:
    """A value stored into an int32 local variable that overflows."""
    if s.buffer.scope in ("local.var", "local") and _is_int32(s.buffer.dtype):
        _check(s.value, ctx, s.span, s.buffer.name)


@rule(N.For)
def check_loop_bound_overflow(f: N.For, ctx: Ctx) -> None:
    """A loop start or extent computed in int32 that overflows."""
    for e in (*f.starts, *f.extents):
        if _check(e, ctx, f.span, "the loop bound"):
            return


def _is_int32(dtype: str) -> bool:
    return str(dtype) in ("int32", "int")


def _check(e, ctx: Ctx, span, what: str) -> bool:
    bad = _overflowing(e, ctx.env)
    if bad is None:
        return False
    node, iv = bad
    value = iv.hi if iv.hi > INT32_MAX else iv.lo
    ctx.emit("index-overflow",
             f"{expr_str(node)} reaches {value:,} for this instance, beyond int32 ({INT32_MAX:,}); {what} is computed "
             f"in 32 bits and wraps around, so the addresses built from it are wrong; compute it in 64 bits "
             f"(T.cast(..., T.int64) on the first operand) or keep the offset inside a buffer index",
             getattr(node, "span", None) or span)
    return True


def _overflowing(e, env):
    """The largest subexpression whose exact int32 range leaves int32, with that range; else None."""
    if not isinstance(e, N.BinOp) or e.op not in _EXACT_OPS or not _exact(e, env):
        for c in _children(e):
            bad = _overflowing(c, env)
            if bad is not None:
                return bad
        return None
    iv = bound(e, env)
    if iv is not None and (iv.hi > INT32_MAX or iv.lo < INT32_MIN):
        inner = None
        for c in (e.lhs, e.rhs):
            inner = inner or _overflowing(c, env)
        return inner or (e, iv)
    return None


def _children(e):
    if isinstance(e, N.BinOp):
        return (e.lhs, e.rhs)
    if isinstance(e, (N.Call, N.BoolOp)):
        return e.args if isinstance(e, N.Call) else e.values
    if isinstance(e, (N.Compare,)):
        return (e.lhs, e.rhs)
    if isinstance(e, N.UnaryOp):
        return (e.operand,)
    if isinstance(e, N.Select):
        return (e.true_value, e.false_value)
    return ()


def _exact(e, env) -> bool:
    """True when interval arithmetic gives the exact range of `e` in int32: only + - * << over int32 constants and
    distinct index variables with known ranges."""
    seen = set()
    for n in walk(e):
        if isinstance(n, N.BinOp):
            if n.op not in _EXACT_OPS:
                return False
        elif isinstance(n, N.Var):
            if n in seen or n.kind not in _INDEX_KINDS or n not in env or not _is_int32(n.dtype):
                return False
            seen.add(n)
        elif isinstance(n, N.Const):
            if not _is_int32(n.dtype) or isinstance(n.value, bool):
                return False
        else:
            return False
    return True
