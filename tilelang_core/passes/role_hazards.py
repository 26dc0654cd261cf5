"""Races between thread roles: the CUDA path runs the branches of a role `if` (`passes.roles`: `if tx < 128:` /
`else:`, `with T.ws(g):`) at the same time, with a block barrier only after roles that use no mbarrier. A role
that reads shared or global memory another role writes needs a barrier between them (and reads after it waits).
The CPU backend runs the roles one after the other unless they wait on each other, which hides the race."""
from __future__ import annotations

from ..analysis.bounds import Interval, bound, loop_interval
from ..analysis.checks.accesses import root
from ..analysis.fastwalk import walk
from ..analysis.walker import substitute
from ..diagnostics import Related
from ..ir import nodes as N
from ..ir.arith import as_int
from ..ir.printer import expr_str
from ..severity import Severity
from .roles import THREAD_INDEX, Roles

WRITES = ("write", "accum", "atomic")
SHARED = ("shared", "shared.dyn", "global")


def role_hazards(func: N.PrimFunc, acc, emit) -> None:
    """Report reads of one role of what a concurrent role writes, unordered by a barrier; `acc`: the launch's
    accesses; `emit(code, message, span, related, severity)`."""
    launch = acc.launch
    if not any(_on_threads(substitute(g, a.lets)) for a in acc.items for g in a.guards):
        return  # no access under an `if` on the thread index: no role to race
    dims = [as_int(t) for t in launch.threads]
    if not dims or any(d is None for d in dims):
        return
    threads = 1
    for d in dims:
        threads *= d
    roles = Roles(func, threads)
    if not roles.branches:
        return
    where = _Where(roles)
    where.stmt(launch.body, None)
    where.finish()
    by_buf: dict = {}
    for a in acc.items:
        r = root(a.buffer)
        info = where.at.get(id(a.op))
        if r.scope in SHARED and info is not None:
            by_buf.setdefault(id(r), []).append((a, info))
    for items in by_buf.values():
        _buffer(items, where.synced, emit)


def _on_threads(cond) -> bool:
    """True when a condition reads the thread index (or is a T.ws role)."""
    return any(isinstance(n, N.Call) and n.name in (*THREAD_INDEX, "ws") or isinstance(n, N.Var) and n.kind == "thread"
               for n in walk(cond))


class _Where:
    """Every statement under a role, in the role's program order: its outermost role `if`, its thread range, the
    barriers the role waited on before it and the barriers it arrives on after it (loops read once, in order)."""

    def __init__(self, roles: Roles) -> None:
        self.roles = roles
        self.order: list = []  # (id(stmt), role key, range, barrier event or None)
        self.at: dict = {}     # id(stmt) -> (role key, range, waits before, arrivals after)
        self.synced = False    # some role waits on a barrier (the roles then run without a block barrier after)

    def stmt(self, s, role) -> None:
        """Record `s` and the statements in it under `role` ((outermost role if id, range) or None)."""
        if s is None:
            return
        if isinstance(s, N.SeqStmt):
            for x in s.stmts:
                self.stmt(x, role)
            return
        event = _event(s)
        self.synced |= event is not None and event[0] == "wait"
        if role is not None:
            self.order.append((id(s), role, event))
        if isinstance(s, N.If) and id(s) in self.roles.branches:
            for body, rng in zip((s.then_body, s.else_body), self.roles.branches[id(s)]):
                self.stmt(body, (role[0] if role else id(s), rng) if rng is not None else role)
        elif isinstance(s, N.If):
            self.stmt(s.then_body, role)
            self.stmt(s.else_body, role)
        elif isinstance(s, (N.For, N.While)):
            self.stmt(s.body, role)

    def finish(self) -> None:
        """Fill `at` from `order`: per role, the waits before and the arrivals after each statement."""
        per_role: dict = {}
        for i, (sid, role, event) in enumerate(self.order):
            per_role.setdefault(role[1], []).append(i)
        for rng, idxs in per_role.items():
            waited: set = set()
            before = {}
            for i in idxs:
                sid, role, event = self.order[i]
                before[i] = frozenset(waited)
                if event is not None and event[0] in ("wait", "both"):
                    waited.add(event[1])
            arrived: set = set()
            for i in reversed(idxs):
                sid, role, event = self.order[i]
                self.at[sid] = (role[0], rng, before[i], frozenset(arrived))
                if event is not None and event[0] in ("arrive", "both"):
                    arrived.add(event[1])


ARRIVALS = ("mbarrier_arrive", "mbarrier_arrive_expect_tx", "cp_async_barrier_noinc")


def _event(s):
    """("wait" | "arrive" | "both", barrier key) for a barrier statement, else None. A named barrier (T.sync_threads
    with a barrier id) is both; an mbarrier is keyed by its T.alloc_barrier."""
    call = s.value if isinstance(s, N.Evaluate) and isinstance(s.value, N.Call) else None
    if call is None:
        return None
    if call.name == "sync_threads" and call.args:
        return "both", ("named", as_int(call.args[0]))
    bar = call.args[0] if call.args else None
    key = root(bar.buffer).name if isinstance(bar, N.Load) else None
    if call.name == "mbarrier_wait_parity":
        return "wait", key
    if call.name in ARRIVALS:
        return "arrive", key
    return None


def _buffer(items, synced: bool, emit) -> None:
    writes = [(a, i) for a, i in items if a.mode in WRITES]
    reads = [(a, i) for a, i in items if a.mode in ("read", "accum")]
    for w, (wif, wrng, wwaits, warrives) in writes:
        for r, (rif, rrng, rwaits, rarrives) in reads:
            if not _disjoint(wrng, rrng) or (not synced and wif != rif):
                continue
            if warrives & rwaits or rarrives & wwaits and not (w.loops and r.loops):
                continue  # a barrier orders the write before the read (in loops: of the same iteration) or back
            overlap = _overlap(w, r)
            if overlap is False:
                continue
            buf = root(w.buffer).name
            wrole, rrole = _role_text(wrng), _role_text(rrng)
            related = (Related(w.span, f"{wrole} writes {buf} here"),) if w.span else ()
            if not synced:
                certain = overlap is True and _whole(w) and _whole(r)
                emit("role-race",
                     f"{rrole} reads {buf} while {wrole} writes it (line {_line(w)}): the two roles of this `if` run "
                     f"at the same time on the GPU and nothing orders them (the CPU backend runs them one after the "
                     f"other); write {buf} before the `if` (the block barrier after it covers the read), or order the "
                     f"roles with an mbarrier (T.barrier_arrive after the write, T.barrier_wait before the read)",
                     r.span, related, Severity.ERROR if certain else None)
            else:
                emit("role-race",
                     f"{rrole} reads {buf}, which {wrole} writes at line {_line(w)}, and no barrier orders the two: "
                     f"the writer arrives on no barrier after the write that this role waits on before the read (nor "
                     f"the other way round), and the roles run at the same time on the GPU (the CPU backend runs them "
                     f"in order); T.barrier_arrive after the write and T.barrier_wait on that barrier before this read",
                     r.span, related, None)
            return


def _disjoint(a, b) -> bool:
    return a is not None and b is not None and (a[0] + a[1] <= b[0] or b[0] + b[1] <= a[0])


def _role_text(rng) -> str:
    first, count = rng
    return f"the role of threads {first}..{first + count - 1}"


def _box(a) -> list | None:
    """Per axis of an access, (lo, hi, start exact) of the elements it touches, or None for an axis that cannot be
    bounded (a symbolic size); None when the access has no known region."""
    if a.axes is None:
        return None
    env = _loop_env(a)
    for start, _ in a.axes:
        for n in walk(substitute(start, a.lets)):
            if isinstance(n, N.Var) and n.kind == "block":
                env[n] = Interval.point(0)  # both roles run in the same block
    out = []
    for start, ext in a.axes:
        s, n = bound(substitute(start, a.lets), env), bound(substitute(ext, a.lets), env)
        out.append(None if s is None or n is None else (s.lo, s.hi + n.hi - 1, s.lo == s.hi))
    return out


def _loop_env(a) -> dict:
    """The ranges of the loops around an access that can be bounded (the others stay unknown)."""
    env: dict = {}
    for f in a.loops:
        if isinstance(f, N.For):
            step = f.step if len(f.vars) == 1 else None
            for v, st, ext in zip(f.vars, f.starts, f.extents):
                iv = loop_interval(substitute(st, a.lets), substitute(ext, a.lets), env, step)
                if iv is not None:
                    env[v] = iv
    return env


def _overlap(w, r) -> bool | None:
    """True when the two accesses touch a common element for certain, False when never, None when unknown."""
    a, b = _box(w), _box(r)
    if a is None or b is None or len(a) != len(b):
        return None
    for x, y, ax_w, ax_r in zip(a, b, w.axes, r.axes):
        if x is not None and y is not None and (x[1] < y[0] or y[1] < x[0]) or _adjacent(ax_w, ax_r, w.lets, r.lets):
            return False
    return all(x is not None and y is not None and x[2] and y[2] for x, y in zip(a, b)) or None


def _adjacent(ax_w, ax_r, lets_w, lets_r) -> bool:
    """True when one axis range ends where the other starts, symbolically (`[:, : D // 2]` and `[:, D // 2 :]`)."""
    (sw, ew), (sr, er) = ((substitute(x, lets_w) for x in ax_w), (substitute(x, lets_r) for x in ax_r))
    return any(as_int(s0) == 0 and expr_str(e0) == expr_str(s1) for s0, e0, s1 in ((sw, ew, sr), (sr, er, sw)))


def _whole(a) -> bool:
    """True when a tile op covers its whole buffer."""
    box = _box(a)
    shape = [as_int(d) for d in a.buffer.shape]
    return (isinstance(a.op, N.TILE_OPS) and box is not None and len(box) == len(shape) and all(
        ax is not None and ax[0] == 0 and ax[2] and s is not None and ax[1] == s - 1 for ax, s in zip(box, shape)))


def _line(a) -> str:
    return str(a.span.line) if a.span is not None else "?"

