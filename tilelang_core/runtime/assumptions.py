"""`T.assume(cond)` whose condition reads only the launch's sizes and scalar arguments: checked on the host at each
call, raising RuntimeError("Assume: <cond>") when the arguments break it (TileLang checks them the same way)."""
from __future__ import annotations

from ..ir import nodes as N
from ..ir.arith import as_const
from ..ir.visitor import transform, walk


def host_assumptions(func: N.PrimFunc) -> list:
    """(condition, source text) of each T.assume the host can evaluate: no loads, no loop or thread variables."""
    out = []
    for n in walk(func.body):
        if isinstance(n, N.Call) and n.name == "assume" and len(n.args) == 2:
            cond = n.args[0]
            if not any(isinstance(x, N.Load) or isinstance(x, N.Var) and x.kind not in ("param", "symbolic")
                       for x in walk(cond)):
                out.append((cond, n.args[1].value))
    return out


def check_assumptions(assumptions: list, values: dict) -> None:
    """Raise RuntimeError for the first assumption `values` (Var -> int) make false; unknowns pass."""
    for cond, text in assumptions:
        if _holds(cond, values) is False:
            raise RuntimeError(f"Assume: {text} does not hold for the given arguments")


def _holds(cond, values: dict):
    if isinstance(cond, N.BoolOp):
        parts = [_holds(v, values) for v in cond.values]
        if cond.op == "and":
            return False if False in parts else (None if None in parts else True)
        return True if True in parts else (None if None in parts else False)
    v = as_const(transform(cond, lambda n: N.Const(values[n]) if isinstance(n, N.Var) and n in values else n))
    return None if v is None else bool(v)
