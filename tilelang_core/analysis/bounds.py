"""Interval arithmetic over tile-IR integer expressions: the range an index can take given loop ranges.

An `Interval(lo, hi)` is inclusive on both ends. `bound(expr, env)` returns None whenever a part of the
expression cannot be bounded (a symbolic size, a load, a float): callers then skip the check, so an
unknown value never produces a diagnostic.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import nodes as N
from .fastwalk import walk


@dataclass(frozen=True)
class Interval:
    """Closed integer interval [lo, hi]."""

    lo: int
    hi: int

    @staticmethod
    def point(v: int) -> "Interval":
        """The interval holding one value."""
        return Interval(v, v)

    def hull(self, other: "Interval") -> "Interval":
        """The smallest interval holding both."""
        return Interval(min(self.lo, other.lo), max(self.hi, other.hi))

    def meet(self, lo: int | None = None, hi: int | None = None) -> "Interval | None":
        """Intersect with [lo, hi] (None = unbounded); None when the result is empty."""
        a = self.lo if lo is None else max(self.lo, lo)
        b = self.hi if hi is None else min(self.hi, hi)
        return Interval(a, b) if a <= b else None


Env = dict  # Var -> Interval


def _corners(a: Interval, b: Interval, fn) -> Interval | None:
    try:
        vals = [fn(x, y) for x in (a.lo, a.hi) for y in (b.lo, b.hi)]
    except ZeroDivisionError:
        return None
    return Interval(min(vals), max(vals))


def _floordiv(a: Interval, b: Interval) -> Interval | None:
    if b.lo <= 0 <= b.hi:
        return None
    return _corners(a, b, lambda x, y: x // y)


def _floormod(a: Interval, b: Interval) -> Interval | None:
    if b.lo != b.hi or b.lo <= 0:
        return None
    m = b.lo
    if a.lo >= 0 and a.hi < m:
        return a
    if a.hi - a.lo + 1 < m and a.lo // m == a.hi // m:
        return Interval(a.lo % m, a.hi % m)
    return Interval(0, m - 1)


def _binop(op: str, a: Interval, b: Interval) -> Interval | None:
    if op == "+":
        return Interval(a.lo + b.lo, a.hi + b.hi)
    if op == "-":
        return Interval(a.lo - b.hi, a.hi - b.lo)
    if op == "*":
        return _corners(a, b, lambda x, y: x * y)
    if op == "//":
        return _floordiv(a, b)
    if op == "%":
        return _floormod(a, b)
    if op == "<<" and b.lo >= 0 and b.hi < 63:
        return _corners(a, b, lambda x, y: x << y)
    if op == ">>" and b.lo >= 0 and b.hi < 63:
        return _corners(a, b, lambda x, y: x >> y)
    if op == "&" and a.lo >= 0 and b.lo >= 0:
        return Interval(0, min(a.hi, b.hi))
    return None


def _call(e: N.Call, env: Env) -> Interval | None:
    if e.name in ("max", "min") and len(e.args) == 2:
        a, b = bound(e.args[0], env), bound(e.args[1], env)
        if a is None or b is None:
            return None
        f = max if e.name == "max" else min
        return Interval(f(a.lo, b.lo), f(a.hi, b.hi))
    if e.name == "ceildiv" and len(e.args) == 2:
        a, b = bound(e.args[0], env), bound(e.args[1], env)
        if a is None or b is None:
            return None
        neg = _floordiv(Interval(-a.hi, -a.lo), b)
        return None if neg is None else Interval(-neg.hi, -neg.lo)
    return None


def bound(e, env: Env) -> Interval | None:
    """The interval an integer expression can take under `env` (Var -> Interval), or None if unknown."""
    if isinstance(e, N.Const):
        if isinstance(e.value, bool) or not isinstance(e.value, int):
            return None
        return Interval.point(e.value)
    if isinstance(e, N.Var):
        return env.get(e)
    if isinstance(e, N.BinOp):
        a = bound(e.lhs, env)
        b = bound(e.rhs, env) if a is not None else None
        return None if b is None else _binop(e.op, a, b)
    if isinstance(e, N.UnaryOp) and e.op == "-":
        a = bound(e.operand, env)
        return None if a is None else Interval(-a.hi, -a.lo)
    if isinstance(e, N.Call):
        return _call(e, env)
    if isinstance(e, N.Cast) and e.dtype.startswith(("int", "uint")):
        return bound(e.value, env)
    if isinstance(e, N.Select):
        a, b = bound(e.true_value, env), bound(e.false_value, env)
        return None if a is None or b is None else a.hull(b)
    return None


def loop_interval(start, extent, env: Env, step=None) -> Interval | None:
    """The values a loop variable takes for range(start, start + extent, step), else None.

    A non-unit step needs a constant start, extent and step (the exact last value is then known)."""
    st = 1 if step is None else _const_int(step, env)
    if st is None or st == 0:
        return None
    if st == 1:
        s, n = bound(start, env), bound(extent, env)
        if s is None or n is None or n.lo != n.hi or n.lo <= 0:
            return None
        return Interval(s.lo, s.hi + n.lo - 1)
    s0, n = _const_int(start, env), _const_int(extent, env)
    if s0 is None or n is None or n == 0 or (n > 0) != (st > 0):
        return None
    last = s0 + st * ((abs(n) - 1) // abs(st))
    return Interval(min(s0, last), max(s0, last))


def _const_int(e, env: Env) -> int | None:
    iv = bound(e, env)
    return iv.lo if iv is not None and iv.lo == iv.hi else None


def mentions(e, var_set) -> bool:
    """True when expression `e` uses any Var of `var_set`."""
    return any(isinstance(n, N.Var) and n in var_set for n in walk(e))


def refine(cond, env: Env, negate: bool = False) -> Env | None:
    """Narrow `env` under a branch condition `var <op> expr` (or `and` of such); None when not understood.

    Returns a new env; a condition that cannot be read returns None (callers then treat the variables
    it mentions as unbounded)."""
    if isinstance(cond, N.UnaryOp) and cond.op == "not":
        return refine(cond.operand, env, not negate)
    if isinstance(cond, N.BoolOp) and cond.op == ("or" if negate else "and"):
        out = env
        for v in cond.values:
            out = refine(v, out, negate)
            if out is None:
                return None
        return out
    if not isinstance(cond, N.Compare):
        return None
    op = _NEGATE[cond.op] if negate else cond.op
    split = _split(cond.lhs, env)
    if split is None:
        split, op = _split(cond.rhs, env), _FLIP[op]
        lhs_other = cond.lhs
    else:
        lhs_other = cond.rhs
    if split is None:
        return None
    var, off, rest = split
    r = bound(lhs_other, env)
    if r is None:
        return None
    r = Interval(r.lo - off.hi, r.hi - off.lo)  # var OP (other - offset)
    lo, hi = {"<": (None, r.hi - 1), "<=": (None, r.hi), ">": (r.lo + 1, None), ">=": (r.lo, None),
              "==": (r.lo, r.hi), "!=": (None, None)}[op]
    new = env[var].meet(lo, hi)
    # the condition bounds a sum of variables: an access using the others together with `var` would look
    # unguarded, so the other variables of the condition become unbounded in the branch
    others = [v for v in env if v is not var and (mentions(rest, {v}) or mentions(lhs_other, {v}))]
    out = {v: iv for v, iv in env.items() if v not in others}
    if new is None:  # unreachable branch: make its variable unbounded so nothing is reported there
        out.pop(var)
    else:
        out[var] = new
    return out


def _split(e, env: Env):
    """(var, offset interval, x) when `e` is `var`, `var + x`, `x + var` or `var - x`, x bounded without var."""
    if isinstance(e, N.Var) and e in env:
        return e, Interval.point(0), N.Const(0)
    if not isinstance(e, N.BinOp) or e.op not in ("+", "-"):
        return None
    for v, x, sign in ((e.lhs, e.rhs, 1 if e.op == "+" else -1), (e.rhs, e.lhs, 1 if e.op == "+" else 0)):
        if sign and isinstance(v, N.Var) and v in env and not mentions(x, {v}):
            off = bound(x, env)
            if off is not None:
                return v, (off if sign > 0 else Interval(-off.hi, -off.lo)), x
    return None


_NEGATE = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
_FLIP = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
