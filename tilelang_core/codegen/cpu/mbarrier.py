"""mbarriers and named barriers as real state on the CPU backend, for blocks whose roles run as coroutines
(cpu/coroutines.py).

An mbarrier (`T.alloc_barrier(arrive_count=c)`, one per count) keeps, per barrier, the arrivals still pending in
its current phase, the number of phases completed and the expected count (PTX `mbarrier.init`: phase 0, pending =
expected = c). Every thread that executes an arrive (`T.barrier_arrive` / `T.mbarrier_arrive`,
`T.mbarrier_arrive_expect_tx`, `T.cp_async_barrier_noinc`) takes one from the pending count, so a role of N threads
arrives N times, as on the GPU; the arrival that brings it to zero completes the phase: the phase count goes up
(its parity flips) and pending is reloaded with the expected count. Transaction bytes are not counted: copies (TMA
included, `T.tma_copy` is a plain copy here) finish before the statement after them runs, so the bytes a phase
expects have always arrived and `T.mbarrier_expect_tx` changes nothing. `T.mbarrier_wait_parity(bar, p)` /
`T.barrier_wait(bar, p)` is satisfied when the phase of parity p has completed, i.e. when the barrier's current
phase parity differs from p (PTX `mbarrier.try_wait.parity`): a fresh barrier satisfies a wait on parity 1 at once.

A named barrier (`T.sync_threads(id, count)`, PTX `bar.sync id, count`) inside a scheduled role chain keeps, per
id, the threads arrived in its current generation and the generation (fresh for each chain, which all the block's
threads enter together); a role arrives with all its active threads, and the arrival that reaches `count` starts
the next generation. A role waits until the generation it arrived in has ended.
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from .expr import LoweringError, as_bool, cast, const, index_expr

ARRIVE_CALLS = frozenset({"mbarrier_arrive", "mbarrier_arrive_expect_tx", "cp_async_barrier_noinc"})
WAIT_CALLS = frozenset({"mbarrier_wait_parity"})
NAMED_IDS = 16  # bar.sync ids 0..15


def is_named_barrier(s) -> bool:
    """`T.sync_threads(id, count)`: a named barrier over `count` threads."""
    return isinstance(s, N.Evaluate) and isinstance(s.value, N.Call) and s.value.name == "sync_threads" \
        and len(s.value.args) == 2


def is_mbarrier_wait(s) -> bool:
    """An mbarrier wait statement (`T.barrier_wait` / `T.mbarrier_wait_parity`)."""
    return isinstance(s, N.Evaluate) and isinstance(s.value, N.Call) and s.value.name in WAIT_CALLS


class Barriers:
    """The mbarrier and named-barrier state of one thread-level block (`simt` is its ThreadEmulation)."""

    def __init__(self, simt):
        self.simt = simt
        self.ctx = simt.ctx
        self.tirx = simt.tirx
        self.states: dict = {}  # ir barrier buffer -> tirx int32 buffer (3, n): pending, phases, expected
        self.named = None  # tirx int32 buffer (2, 16): arrived, generation of each named barrier id

    def named_state(self) -> list:
        """Fresh named-barrier state (all ids at generation 0, none arrived) for one scheduled role chain: its
        threads all reach the chain together, so no named barrier is half-way through there."""
        tirx = self.tirx
        self.named = tirx.decl_buffer((2, NAMED_IDS), "int32", self.ctx.fresh("named_barriers").name, scope="global")
        t = self.ctx.fresh("i")
        clear = tirx.SeqStmt([tirx.BufferStore(self.named, const(0, "int32"), [const(r, "int32"), t]) for r in (0, 1)])
        return [tirx.AllocBuffer(self.named),
                tirx.For(t, const(0, "int32"), const(NAMED_IDS, "int32"), tirx.ForKind.SERIAL, clear)]

    def allocate(self, s: N.Allocate) -> list:
        """The state of a `T.alloc_barrier` (every barrier at phase 0 with its arrive count pending)."""
        counts = s.init.args if isinstance(s.init, N.Call) and s.init.name == "barrier_counts" else None
        if counts is None or any(as_int(c) is None for c in counts):
            raise LoweringError(f"the arrive counts of '{s.buffer.name}' must be compile-time integers for the CPU "
                                "backend to run roles that wait on each other", s.span)
        n = len(counts)
        state = self.tirx.decl_buffer((3, n), "int32", self.ctx.fresh(s.buffer.name + "_state").name, scope="global")
        self.states[s.buffer] = state
        out = [self.tirx.AllocBuffer(state)]
        for i, c in enumerate(counts):
            for row, value in ((0, as_int(c)), (1, 0), (2, as_int(c))):
                at = [const(row, "int32"), const(i, "int32")]
                out.append(self.tirx.BufferStore(state, const(value, "int32"), at))
        return out

    def _slot(self, call: N.Call):
        """(state buffer, index) of the barrier a call names (its index lowered for the current thread, or for
        thread 0 outside the threads' phases, as every barrier loop's bounds)."""
        load = call.args[0]
        if load.buffer not in self.states:
            raise LoweringError(f"'{load.buffer.name}' is used before its T.alloc_barrier", call.span)
        at = load.indices[0]
        return self.states[load.buffer], self.ctx.index(at) if self.ctx.tid is not None else \
            index_expr(self.simt.uniform(at))

    def statement(self, s: N.Evaluate, mask) -> list:
        """An mbarrier call outside the waits the coroutines yield at: arrivals by every active thread, a wait
        checked (nothing else can complete it there), expect_tx nothing."""
        call = s.value
        if call.name in ARRIVE_CALLS:
            return [self._each_thread(mask, lambda: self._arrive(call))]
        if call.name in WAIT_CALLS:
            return [self.tirx.AssertStmt(self.ready(call), self.ctx.ir.StringImm("RuntimeError"),
                                         [self.ctx.ir.StringImm(self.stuck(s))])]
        return []

    def _arrive(self, call: N.Call):
        if call.name == "mbarrier_arrive" and len(call.args) > 1:
            raise LoweringError("an arrival on another CTA's mbarrier (cta_id) is not supported by the CPU backend, "
                                "which runs one block at a time", call.span)
        tirx = self.tirx
        state, i = self._slot(call)
        zero, one, two = (const(v, "int32") for v in (0, 1, 2))
        pending = tirx.BufferLoad(state, [zero, i]) - one
        complete = tirx.SeqStmt([tirx.BufferStore(state, tirx.BufferLoad(state, [one, i]) + one, [one, i]),
                                 tirx.BufferStore(state, tirx.BufferLoad(state, [two, i]), [zero, i])])
        return tirx.SeqStmt([tirx.BufferStore(state, pending, [zero, i]),
                             tirx.IfThenElse(tirx.EQ(tirx.BufferLoad(state, [zero, i]), zero), complete, None)])

    def ready(self, call: N.Call):
        """The condition that a wait is satisfied: the barrier's phase parity differs from the awaited parity."""
        tirx = self.tirx
        state, i = self._slot(call)
        phase = tirx.BufferLoad(state, [const(1, "int32"), i])
        parity = cast(self.simt.uniform(call.args[1]), "int32")
        one = const(1, "int32")
        return tirx.NE(tirx.bitwise_and(phase, one), tirx.bitwise_and(parity, one))

    def stuck(self, s) -> str:
        """The runtime error of a wait that can never be satisfied."""
        call = s.value
        line = f" at line {s.span.line}" if s.span is not None else ""
        if is_named_barrier(s):
            what = "this named barrier (T.sync_threads(id, count)): fewer than `count` threads reach it"
        else:
            what = (f"this wait on the mbarrier '{call.args[0].buffer.name}': no role arrives on it any more, so "
                    "the phase it waits for never completes (check the arrive counts of T.alloc_barrier, the "
                    "parities and which roles arrive)")
        return f"deadlock{line}: {what}"

    # -- named barriers ---------------------------------------------------------------------------
    def named_id(self, s):
        """The named barrier's id and count as tirx expressions (the id a compile-time constant below 16)."""
        bid, count = s.value.args
        if as_int(bid) is None or not 0 <= as_int(bid) < NAMED_IDS:
            raise LoweringError("the id of a named barrier (T.sync_threads(id, count)) must be a constant in "
                                f"[0, {NAMED_IDS}) for the CPU backend", s.span)
        return const(as_int(bid), "int32"), cast(self.simt.uniform(count), "int32")

    def named_arrive(self, s, mask, generation) -> list:
        """The active threads arrive on a named barrier; `generation` (a one-element buffer) keeps the
        generation they arrived in."""
        tirx = self.tirx
        bid, count = self.named_id(s)
        zero, one = const(0, "int32"), const(1, "int32")
        arrived = tirx.BufferLoad(self.named, [zero, bid])
        gen = tirx.BufferLoad(self.named, [one, bid])
        add = lambda: tirx.BufferStore(self.named, tirx.BufferLoad(self.named, [zero, bid]) + one, [zero, bid])
        complete = tirx.SeqStmt([tirx.BufferStore(self.named, zero, [zero, bid]),
                                 tirx.BufferStore(self.named, gen + one, [one, bid])])
        return [tirx.BufferStore(generation, gen, [zero]), self._each_thread(mask, add),
                tirx.IfThenElse(tirx.GE(arrived, count), complete, None)]

    def named_ready(self, s, generation):
        """The condition that the generation a role arrived in has ended."""
        bid, _ = self.named_id(s)
        zero = const(0, "int32")
        return self.tirx.NE(self.tirx.BufferLoad(self.named, [const(1, "int32"), bid]),
                            self.tirx.BufferLoad(generation, [zero]))

    def _each_thread(self, mask, build):
        """`for t in threads: if active[t]: build()` with the thread id bound while `build` lowers."""
        tirx, ctx = self.tirx, self.ctx
        t = ctx.fresh("t")
        saved, ctx.tid = ctx.tid, t
        try:
            stmt = build()
        finally:
            ctx.tid = saved
        if mask is not None:
            stmt = tirx.IfThenElse(as_bool(tirx.NE(tirx.BufferLoad(mask[0], [t]), const(0, "int8"))), stmt, None)
        return tirx.For(t, const(0, "int32"), self.simt.total, tirx.ForKind.SERIAL, stmt)
