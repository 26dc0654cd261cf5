"""Thread roles: the branches of an `if` on the thread index that select a contiguous, warp-aligned range of
the block's threads (`if tx < 128:`, `elif 128 <= tx < 256:`, `else:`, `with T.ws(g):`). Tile ops inside a
role run on the role's threads only: their copies stride over them, their gemms split over their warps and
their fragments are laid out for them.

Before: `T.Kernel(..., threads=384)`, `if tx < 128: T.gemm(..)` `elif tx < 256: T.copy(..)` `else: ..`.
After: Roles.branches {If: ((0, 128), (128, 384))}, the inner If ((128, 256), (256, 384)), and every node
under a branch mapped to its innermost range (`range_of`, `threads_of`).
"""
from __future__ import annotations

from ..ir import nodes as N
from ..ir.arith import as_int
from ..ir.visitor import walk

WARP = 32
WARP_GROUP = 128
THREAD_INDEX = ("get_thread_binding", "get_lane_idx", "get_warp_idx", "get_warp_group_idx")
MBARRIER_CALLS = ("mbarrier_arrive", "mbarrier_wait_parity", "mbarrier_expect_tx", "mbarrier_arrive_expect_tx",
                  "cp_async_barrier_noinc")


class Roles:
    """The thread ranges of a kernel's role branches; `ranges` are (first thread, thread count)."""

    def __init__(self, func: N.PrimFunc, threads: int):
        self.threads = threads
        self.branches: dict = {}  # id(If) -> (then range | None, else range | None)
        self.of_node: dict = {}   # id(node) -> innermost range enclosing it
        launch = func.launch
        dims = [as_int(t) for t in launch.threads] if launch is not None else [threads]
        self.flat = all(d == 1 for d in dims[1:])  # get_thread_binding(0) is the flat index
        self.lets = {n.var: n.value for n in walk(func.body) if isinstance(n, N.LetStmt)}
        self.ws_serial = not any(_synchronises(n.then_body) for n in walk(func.body) if is_ws(n))
        body = launch.body if launch is not None else func.body
        self._visit(body, (0, threads))

    def range_of(self, node) -> tuple[int, int] | None:
        """(first thread, count) of the innermost role around `node`, None outside roles."""
        return self.of_node.get(id(node))

    def threads_of(self, node, default: int) -> int:
        """Threads that run `node`: its role's, else `default` (the block's)."""
        rng = self.of_node.get(id(node))
        return rng[1] if rng is not None else default

    def _visit(self, stmt, current) -> None:
        if isinstance(stmt, N.If):
            then_rng, else_rng = self._split(stmt, current)
            if then_rng is not None or else_rng is not None:
                self.branches[id(stmt)] = (then_rng, else_rng)
            self._enter(stmt.then_body, then_rng, current)
            if stmt.else_body is not None:
                self._enter(stmt.else_body, else_rng, current)
            return
        for child in _statements(stmt):
            self._visit(child, current)

    def _enter(self, body, rng, current) -> None:
        if rng is None:
            self._visit(body, current)
            return
        for n in walk(body):
            self.of_node[id(n)] = rng
        self._visit(body, rng)

    def _split(self, s: N.If, current) -> tuple:
        """(then range, else range) of an `if` inside `current`, each None when it is not a role."""
        lo, hi = current[0], current[0] + current[1]
        if is_ws(s):
            if self.ws_serial:
                return None, None
            groups = [as_int(a) for a in s.cond.args]
            if len(groups) != 1 or groups[0] is None:
                return None, None
            span = (groups[0] * WARP_GROUP, (groups[0] + 1) * WARP_GROUP)
        else:
            span = self.interval(s.cond)
        if span is None:
            return None, None
        a, b = max(lo, span[0]), min(hi, span[1])
        if a >= b:
            return None, None
        then_rng = _role(a, b)
        rest = (lo, a) if b == hi else (b, hi) if a == lo else None
        else_rng = _role(*rest) if rest is not None and s.else_body is not None and not is_ws(s) else None
        return then_rng, else_rng

    def interval(self, cond) -> tuple[int, int] | None:
        """[lo, hi) of the flat thread index where `cond` holds, when it is a conjunction of comparisons of the
        thread index (or its warp / warp-group index) with constants; None otherwise."""
        if isinstance(cond, N.BoolOp) and cond.op == "and":
            lo, hi = 0, self.threads
            for v in cond.values:
                part = self.interval(v)
                if part is None:
                    return None
                lo, hi = max(lo, part[0]), min(hi, part[1])
            return lo, max(lo, hi)
        if not isinstance(cond, N.Compare):
            return None
        op, lhs, rhs = cond.op, cond.lhs, cond.rhs
        if as_int(lhs) is not None:  # c < tx  ->  tx > c
            op, lhs, rhs = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "=="}.get(op), rhs, lhs
        c, unit = as_int(rhs), self._unit(lhs)
        if c is None or unit is None or op is None:
            return None
        first = {"<": (0, c), "<=": (0, c + 1), ">": (c + 1, None), ">=": (c, None), "==": (c, c + 1)}.get(op)
        if first is None:
            return None
        lo, hi = first[0] * unit, (first[1] * unit if first[1] is not None else self.threads)
        return max(lo, 0), min(hi, self.threads)

    def _unit(self, e) -> int | None:
        """Threads per step of a thread-index expression: 1 for tx, 32 for its warp, 128 for its warp group."""
        if isinstance(e, N.Var) and e in self.lets:
            return self._unit(self.lets[e])
        if isinstance(e, N.Call) and e.name == "get_thread_binding":
            dim = as_int(e.args[0]) if e.args else 0
            return 1 if dim == 0 and self.flat else None
        if isinstance(e, N.Call) and e.name in ("get_warp_idx", "get_warp_group_idx"):
            args = [as_int(a) for a in e.args]
            warp = args[0] if args else WARP
            per = (args[1] if len(args) > 1 else WARP_GROUP // WARP) if e.name == "get_warp_group_idx" else 1
            return warp * per if warp and per and self.flat else None
        if isinstance(e, N.BinOp) and e.op == "//" or isinstance(e, N.Call) and e.name == "floordiv":
            x, k = (e.lhs, e.rhs) if isinstance(e, N.BinOp) else e.args
            inner, k = self._unit(x), as_int(k)
            return inner * k if inner is not None and k and k > 0 else None
        return None


def _role(a: int, b: int) -> tuple[int, int] | None:
    """(first, count) of [a, b) when it is whole warps, else None."""
    return (a, b - a) if a % WARP == 0 and (b - a) % WARP == 0 and b > a else None


def is_ws(s) -> bool:
    """True for a `with T.ws(...)` role."""
    return isinstance(s, N.If) and isinstance(s.cond, N.Call) and s.cond.name == "ws"


def _synchronises(body) -> bool:
    """True when `body` arrives on or waits for an mbarrier."""
    return any(isinstance(m, N.Call) and m.name in MBARRIER_CALLS for m in walk(body))


def synchronising(s: N.If) -> bool:
    """True when a branch of the role `if` `s` arrives on or waits for an mbarrier (its roles then order
    themselves: no block-wide barrier may follow them)."""
    return _synchronises(s.then_body) or s.else_body is not None and _synchronises(s.else_body)


def _statements(stmt):
    """The statements directly nested in `stmt` (loop and let bodies, sequence members)."""
    if isinstance(stmt, N.SeqStmt):
        return stmt.stmts
    if isinstance(stmt, (N.For, N.While)):
        return (stmt.body,)
    if isinstance(stmt, N.Launch):
        return (stmt.body,)
    return ()
