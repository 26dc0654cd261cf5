"""Warp-specialised roles that wait on each other, run as coroutines on the CPU backend.

A thread-level block (cpu/simt.py) runs the branches of an `if` on the thread index one after another. That is
right until a role waits on an mbarrier (or a named barrier) that a role written after it arrives on: the producer
of a consumer/producer pair, two consumers that hand a tile back and forth, a ring of full/empty barriers. For
those `if` chains (cpu/role_order.py finds them) each branch becomes a coroutine and a scheduler in the block runs
them in the order the barriers allow, not in program order:

    while some role is unfinished:
        for each unfinished role: resume it; it runs until a wait whose phase has not completed, or to its end
        if no role ran a statement or passed a wait in the whole round: deadlock -> a runtime error naming the
        waits the roles are stuck at (never a hang)

A role is lowered as a switch-style state machine, one program counter per role in block storage. Its statements
are cut at the waits into segments, each lowered exactly as a role's statements always are (phases over the active
threads, tile ops once); every segment, wait and loop head has a number, and `if pc == k: ...; pc = k + 1` guards
each, so a resumed role skips straight to where it stopped. A wait is `if ready: pc = k + 1 else: blocked`. Loops
and branches that contain waits keep their structure around the guarded pieces: a loop is a `while` that runs while
the counter lies inside its body's numbers (entry, head test, body, latch that steps the loop variable), a branch
jumps to its first piece or past it. What must live across a yield lives in block storage: the loop variables (a
segment binds them from there, so the lowering inside a segment sees plain variables), the lets of the role's own
statement lists, and every allocation a segment makes (hoisted before the scheduler). An unrolled loop of constant
trip count around waits is unrolled here, so `stage` stays a constant in the tile ops it indexes. This keeps each
role's code the code it has without the scheduler, with the GPU's order of events between roles: a wait only
passes once the arrivals that complete its phase have run (cpu/mbarrier.py models the barriers).

A role `if` on the thread index nested inside a scheduled role with a wait inside it is refused. Role `if`s that
are separate statements (`with T.ws(0): ...` then `with T.ws(1): ...`, not one if/elif chain) are scheduled one
after another, each on its own: waits between them follow program order, so one that only a later statement
satisfies ends in the deadlock error rather than a wrong value.
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.visitor import flat_stmts, walk
from .expr import LoweringError, as_bool, cast, const, dtype_of, index_expr
from .mbarrier import is_mbarrier_wait, is_named_barrier

UNROLL_LIMIT = 16  # an unrolled loop around waits with at most this many iterations is unrolled here


def yields(s) -> bool:
    """True when `s` holds a wait a role may have to yield at (an mbarrier wait or a named barrier)."""
    return any(is_mbarrier_wait(n) or is_named_barrier(n) for n in walk(s))


class RoleScheduler:
    """Lowers one `if` chain on the thread index whose roles wait on each other (`simt`: the ThreadEmulation)."""

    def __init__(self, simt, barriers):
        self.simt, self.barriers = simt, barriers
        self.ctx, self.tirx = simt.ctx, simt.tirx
        self.hoisted: list = []  # allocations made by segments, placed before the scheduler
        self.loops: list = []  # (ir var, tirx slot, range or None) of the coroutine loops around the current piece
        self.next_id = 0
        self.waits: list = []  # (pc, statement) of the current role's waits

    # -- the scheduler ------------------------------------------------------------------------------
    def lower(self, s: N.If, mask) -> list:
        """The role chain `s` as masks, per-role state machines and the scheduler loop around them."""
        tirx, ctx = self.tirx, self.ctx
        roles, prelude = [], self.barriers.named_state()
        self._roles(s, mask, roles, prelude)
        self.pcs = tirx.decl_buffer((len(roles),), "int32", ctx.fresh("role_pc").name, scope="global")
        self.flags = tirx.decl_buffer((3,), "int32", ctx.fresh("scheduler").name, scope="global")
        bodies, ends, waits = [], [], []
        for r, (role_mask, body) in enumerate(roles):
            self.role, self.next_id, self.waits = r, 0, []
            bodies.append(self._list(flat_stmts(body), role_mask))
            ends.append(self.next_id)
            waits.append(self.waits)
        zero, one = const(0, "int32"), const(1, "int32")
        pc = lambda r: tirx.BufferLoad(self.pcs, [const(r, "int32")])
        start = [tirx.BufferStore(self.pcs, tirx.Select(tirx.NE(tirx.BufferLoad(m[1], [zero]), const(0, "int8")),
                                                        zero, const(end, "int32")), [const(r, "int32")])
                 for r, ((m, _), end) in enumerate(zip(roles, ends))]
        rounds = [self._flag(1, 0)]
        for r, (body, end) in enumerate(zip(bodies, ends)):
            rounds.append(tirx.IfThenElse(tirx.NE(pc(r), const(end, "int32")),
                                          self._seq([self._flag(2, 0)] + body), None))
        unfinished = tirx.NE(pc(0), const(ends[0], "int32"))
        for r in range(1, len(roles)):
            unfinished = tirx.Or(unfinished, tirx.NE(pc(r), const(ends[r], "int32")))
        rounds.append(self._flag(0, cast(unfinished, "int32")))
        rounds.append(tirx.IfThenElse(tirx.And(tirx.NE(self._get(0), zero), tirx.EQ(self._get(1), zero)),
                                      self._deadlock(s, waits), None))
        loop = tirx.While(tirx.NE(self._get(0), zero), self._seq(rounds))
        return (prelude + self.hoisted + [tirx.AllocBuffer(self.pcs), tirx.AllocBuffer(self.flags)] + start
                + [self._flag(0, one), loop])

    def _deadlock(self, s: N.If, waits: list):
        """A round in which no role moved: the runtime error of the first role stuck at a wait (then a general one)."""
        tirx, ir = self.tirx, self.ctx.ir
        pc = lambda r: tirx.BufferLoad(self.pcs, [const(r, "int32")])
        stuck = [tirx.AssertStmt(tirx.NE(pc(r), const(k, "int32")), ir.StringImm("RuntimeError"),
                                 [ir.StringImm(self.barriers.stuck(w))])
                 for r, role_waits in enumerate(waits) for k, w in role_waits]
        line = f" at line {s.span.line}" if s.span is not None else ""
        stuck.append(tirx.AssertStmt(const(False, "bool"), ir.StringImm("RuntimeError"),
                                     [ir.StringImm(f"deadlock: the roles of the `if`{line} wait on each other")]))
        return self._seq(stuck)

    def _roles(self, s: N.If, parent, roles: list, prelude: list) -> None:
        """The branches of an if/elif/else chain on the thread as (mask, body), their masks' fills in `prelude`."""
        then_mask, fill = self.simt.mask(s.cond, parent, negate=False, span=s.span)
        prelude += fill
        roles.append((then_mask, s.then_body))
        if s.else_body is None:
            return
        else_mask, fill = self.simt.mask(s.cond, parent, negate=True, span=s.span)
        prelude += fill
        inner = flat_stmts(s.else_body)
        if len(inner) == 1 and isinstance(inner[0], N.If) and self.simt.depends(inner[0].cond):
            self._roles(inner[0], else_mask, roles, prelude)
        else:
            roles.append((else_mask, s.else_body))

    def _get(self, k: int):
        return self.tirx.BufferLoad(self.flags, [const(k, "int32")])  # 0 running, 1 progress, 2 blocked

    def _flag(self, k: int, value):
        return self.tirx.BufferStore(self.flags, self.ctx.as_expr(value), [const(k, "int32")])

    def _pc(self):
        return self.tirx.BufferLoad(self.pcs, [const(self.role, "int32")])

    def _goto(self, target):
        return self.tirx.BufferStore(self.pcs, self.ctx.as_expr(target), [const(self.role, "int32")])

    def _at(self, k: int, stmts: list):
        """`if pc == k: stmts`."""
        return self.tirx.IfThenElse(self.tirx.EQ(self._pc(), const(k, "int32")), self._seq(stmts), None)

    def _id(self) -> int:
        self.next_id += 1
        return self.next_id - 1

    def _seq(self, stmts: list):
        return stmts[0] if len(stmts) == 1 else self.tirx.SeqStmt(stmts)

    # -- a role's statements -------------------------------------------------------------------------
    def _list(self, stmts: list, mask) -> list:
        """Statements as guarded pieces: runs without waits become segments, the rest keep their structure."""
        out, run = [], []
        for s in stmts:
            if yields(s):
                out += self._segment(run, mask) + self._structured(s, mask)
                run = []
            else:
                run.append(s)
        return out + self._segment(run, mask)

    def _structured(self, s, mask) -> list:
        if is_mbarrier_wait(s):
            return self._wait(s, self.barriers.ready(s.value))
        if is_named_barrier(s):
            generation = self.tirx.decl_buffer((1,), "int32", self.ctx.fresh("named_generation").name, scope="global")
            self.hoisted.append(self.tirx.AllocBuffer(generation))
            k = self._id()
            arrive = self._at(k, self.barriers.named_arrive(s, mask, generation)
                              + [self._goto(k + 1), self._flag(1, 1)])
            return [arrive] + self._wait(s, self.barriers.named_ready(s, generation))
        if isinstance(s, N.SeqStmt):
            return self._list(flat_stmts(s), mask)
        if isinstance(s, N.For):
            return self._for(s, 0, mask)
        if isinstance(s, N.While):
            return self._while(s, mask)
        if isinstance(s, N.If) and not self.simt.depends(s.cond):
            return self._if(s, mask)
        what = "an `if` on the thread index" if isinstance(s, N.If) else type(s).__name__
        raise LoweringError(f"a barrier wait inside {what} within a warp-specialised role is not supported by the CPU "
                            "backend, which runs roles that wait on each other as coroutines; wait in the role's own "
                            "statements", s.span)

    def _wait(self, s, ready) -> list:
        """`if pc == k: (pc = k + 1 if ready else blocked)`."""
        k = self._id()
        self.waits.append((k, s))
        passed = self.tirx.SeqStmt([self._goto(k + 1), self._flag(1, 1)])
        return [self._at(k, [self.tirx.IfThenElse(as_bool(ready), passed, self._flag(2, 1))])]

    def _segment(self, run: list, mask) -> list:
        """A run of statements without waits, lowered as the role's statements always are, under its number."""
        if not run:
            return []
        k = self._id()
        ctx, tirx = self.ctx, self.tirx
        body, saved = [], {}
        for var, slot, rng in self.loops:  # the loop variables as plain variables inside the segment
            saved[var] = ctx.vars[var]
            value = ctx.fresh(var.name, dtype_of(ctx.vars[var]))
            if rng is not None:
                ctx.analyzer.bind(value, rng)
            body.append(tirx.Bind(value, tirx.BufferLoad(slot, [const(0, "int32")])))
            ctx.vars[var] = value
        try:
            sub: list = []
            for s in run:
                if isinstance(s, N.LetStmt) and s.var.dtype != "handle" and not self.simt.depends(s.value):
                    body += self._hoist(self.simt.block(N.SeqStmt(tuple(sub)), mask)) + self._let(s)
                    sub = []
                else:
                    sub.append(s)
            body += self._hoist(self.simt.block(N.SeqStmt(tuple(sub)), mask))
        finally:
            ctx.vars.update(saved)
        return [self._at(k, body + [self._goto(k + 1), self._flag(1, 1)])]

    def _let(self, s: N.LetStmt) -> list:
        """A uniform let of the role's statements: kept in block storage (a later segment may read it)."""
        value = self.ctx.expr(s.value)
        slot = self.tirx.decl_buffer((1,), dtype_of(value), self.ctx.fresh(s.var.name).name, scope="global")
        self.hoisted.append(self.tirx.AllocBuffer(slot))
        self.ctx.vars[s.var] = self.tirx.BufferLoad(slot, [const(0, "int32")])
        return [self.tirx.BufferStore(slot, value, [const(0, "int32")])]

    def _hoist(self, stmts: list) -> list:
        """`stmts` without their allocations, which move before the scheduler (a later segment may use them)."""
        out = []
        for st in stmts:
            if isinstance(st, self.tirx.SeqStmt):
                out += self._hoist(list(st.seq))
            elif isinstance(st, (self.tirx.AllocBuffer, self.tirx.DeclBuffer)):
                self.hoisted.append(st)
            else:
                out.append(st)
        return out

    # -- control around waits --------------------------------------------------------------------------
    def _for(self, s: N.For, k: int, mask) -> list:
        """The k-th loop of `s` around waits: unrolled when it is a short constant unroll, else a resumable loop
        (entry: start and end into the slot; head: into the body or past it; latch: the next value)."""
        if k == len(s.vars):
            return self._list(flat_stmts(s.body), mask)
        ctx, tirx = self.ctx, self.tirx
        start, extent = index_expr(self.simt.uniform(s.starts[k])), index_expr(self.simt.uniform(s.extents[k]))
        step = as_int(s.step) if s.step is not None else 1
        if step is None or step <= 0:
            raise LoweringError("the loop step must be a positive constant on the CPU backend", s.span)
        var = s.vars[k]
        if s.kind == "unroll" and as_int(s.starts[k]) is not None and as_int(s.extents[k]) is not None \
                and as_int(s.extents[k]) <= UNROLL_LIMIT:
            out = []
            for v in range(as_int(s.starts[k]), as_int(s.starts[k]) + as_int(s.extents[k]), step):
                ctx.vars[var] = const(v, dtype_of(start))
                out += self._for(s, k + 1, mask)
            return out
        dtype = "int64" if "int64" in (dtype_of(start), dtype_of(extent)) else "int32"
        slot = tirx.decl_buffer((2,), dtype, ctx.fresh(var.name).name, scope="global")  # value, end
        self.hoisted.append(tirx.AllocBuffer(slot))
        value, end = (tirx.BufferLoad(slot, [const(i, "int32")]) for i in (0, 1))
        rng = None
        if isinstance(start, tirx.IntImm) and isinstance(extent, tirx.IntImm):
            rng = ctx.ir.Range.from_min_extent(cast(start, dtype), cast(extent, dtype))
        entry = self._id()
        ctx.vars[var] = value
        self.loops.append((var, slot, rng))
        head = self._id()
        try:
            body = self._for(s, k + 1, mask)
        finally:
            self.loops.pop()
            ctx.vars[var] = value
        latch = self._id()
        enter = [tirx.BufferStore(slot, cast(start, dtype), [const(0, "int32")]),
                 tirx.BufferStore(slot, cast(start, dtype) + cast(extent, dtype), [const(1, "int32")]),
                 self._goto(head)]
        test = self._goto(tirx.Select(tirx.LT(value, end), const(head + 1, "int32"), const(latch + 1, "int32")))
        step_on = [tirx.BufferStore(slot, value + const(step, dtype), [const(0, "int32")]), self._goto(head)]
        return [self._at(entry, enter), self._loop(head, latch, [self._at(head, [test])] + body
                                                   + [self._at(latch, step_on)])]

    def _while(self, s: N.While, mask) -> list:
        """A `while` around waits: its condition tested at the head (thread 0's value, as for every barrier loop)."""
        head = self._id()
        body = self._list(flat_stmts(s.body), mask)
        latch = self._id()
        cond = as_bool(self.simt.uniform(s.cond))
        test = self._goto(self.tirx.Select(cond, const(head + 1, "int32"), const(latch + 1, "int32")))
        return [self._loop(head, latch, [self._at(head, [test])] + body + [self._at(latch, [self._goto(head)])])]

    def _loop(self, head: int, latch: int, body: list):
        """`while not blocked and head <= pc <= latch: body`."""
        tirx = self.tirx
        inside = tirx.And(tirx.GE(self._pc(), const(head, "int32")), tirx.LE(self._pc(), const(latch, "int32")))
        return tirx.While(tirx.And(tirx.EQ(self._get(2), const(0, "int32")), inside), self._seq(body))

    def _if(self, s: N.If, mask) -> list:
        """A uniform `if` around waits: the condition picks the first piece of a branch once, at its number."""
        entry = self._id()
        cond = as_bool(self.simt.uniform(s.cond))
        then = self._list(flat_stmts(s.then_body), mask)
        jump = self._id()
        other = self._list(flat_stmts(s.else_body), mask)
        pick = self._goto(self.tirx.Select(cond, const(entry + 1, "int32"), const(jump + 1, "int32")))
        return [self._at(entry, [pick])] + then + [self._at(jump, [self._goto(self.next_id)])] + other
