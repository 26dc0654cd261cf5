"""Thread-level kernels on the CPU backend: a block's threads run as explicit loops, split at barriers.

A kernel is thread-level when its block reads a thread index (`T.get_thread_binding`, `T.thread_binding`,
`T.get_lane_idx`, `T.get_warp_idx`, `T.get_warp_group_idx`, `T.ws`). Its block body is lowered as barrier
phases (a CPU SIMT emulation in the style of MCUDA/POCL loop fission):

- A statement is *per-thread* when it depends on the thread: it reads a thread index, a let bound from one,
  or a thread's private storage (`T.alloc_local` / `T.alloc_var`). Consecutive per-thread statements form a
  phase: `for t in range(threads): <statements with thread index t>`. Everything a thread does between two
  barriers therefore runs before any thread passes the barrier, which is all CUDA promises.
- Every other statement (tile ops, `T.Parallel` nests, uniform scalar code) is block-level: it runs once, in
  program order between the phases, exactly as in block-level kernels. A tile op whose indices read thread storage
  (`A_s[stage, :, :]`, `stage = T.alloc_var(...)`) is too: every thread agrees on them, thread 0's are read.
- Barriers (`T.sync_threads`, named barriers, mbarrier arrive/wait) end a phase and emit nothing (but see the
  coroutines below). A loop or `while` that contains a barrier stays a block-level loop around its phases; CUDA
  requires every thread to reach the same barriers, so a trip count or condition read from thread storage is
  taken from thread 0.
  An `if` on the thread index that contains barriers or tile ops (warp-specialised roles, `with T.ws(1):`,
  `if tx < RADIX:` with named barriers) becomes an active mask: each thread's condition is stored, phases
  inside run only the threads whose mask is set, and block-level statements inside (tile ops) run once when
  any thread is active. Roles run one after another in program order, unless they wait on each other.
- A block whose roles wait on each other (cpu/role_order.py: a role waits on an mbarrier that a role written
  after it arrives on, or two roles of one chain meet at a named barrier) models its barriers for real
  (cpu/mbarrier.py: arrivals by every active thread, phases, parities) and runs each such role chain as
  coroutines under a scheduler in the block (cpu/coroutines.py): a role yields at a wait whose phase has not
  completed, the others run until they arrive, so events follow the arrival order; a round where no role can
  move is a deadlock, reported at run time with the waits the roles are stuck at.
- Warp-collective calls (`T.ptx_mma`) are per-thread statements in a phase of their own, between implicit
  barriers: each thread computes its share from the registers of the lanes of its warp.
- Private storage gets one copy per thread: a local buffer of shape (s0, ...) becomes (threads*s0, ...)
  and thread t uses rows [t*s0, (t+1)*s0); a let that depends on the thread becomes a per-thread slot. So does
  a fragment that only scalar code uses, at indices that do not name a thread (no tile op, no T.Parallel loop:
  `prefetch[stage, r] = Indices[..., tx // 8]`): on the GPU each thread then holds the whole of it.
- Thread indices come from the flat thread id t: threadIdx.x = t % X, .y = t // X % Y, .z = t // (X*Y);
  lane = t % 32, warp = t // 32, warp group = t // 128.
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.visitor import flat_stmts, op_regions, walk
from .expr import LoweringError, as_bool, cast, const
from .lower_expr import Late
from .rng import RNG_CALLS, draws
from .coroutines import RoleScheduler, yields
from .mbarrier import Barriers
from .role_order import THREAD_CALLS, roles_wait_on_each_other
from .simt_stmts import (PRIVATE_SCOPES, conflicts, has_phases, is_barrier, is_collective, is_shuffle,
                         per_thread_fragments, shared_rw)


class ThreadEmulation:
    """Lowers one thread-level block body; `ctx` is the CpuLowering (its tid is the current thread id)."""

    def __init__(self, ctx, launch: N.Launch):
        self.ctx = ctx
        self.tirx = ctx.tirx
        self.extents = [ctx.index(t) for t in launch.threads] or [const(128, "int32")]
        total = self.extents[0]
        for e in self.extents[1:]:
            total = total * e
        self.total = total
        self.thread_vars: set = set()  # lets whose value depends on the thread
        self.private_fragments = per_thread_fragments(launch.body)
        # roles that wait on each other run as coroutines over real barrier state; other blocks keep barriers free
        self.barriers = Barriers(self) if roles_wait_on_each_other(launch.body) else None

    # -- analysis -----------------------------------------------------------------------------------
    def depends(self, node) -> bool:
        """True when `node` reads a thread index, a thread-dependent let, a thread's private storage or generator."""
        for n in walk(node):
            if isinstance(n, N.Call) and (n.name in THREAD_CALLS or n.name in RNG_CALLS):
                return True
            if isinstance(n, N.Var) and n in self.thread_vars:
                return True
            buf = getattr(n, "buffer", None)
            if isinstance(buf, N.Buffer) and self.is_private(buf):
                return True
        return False

    # -- thread indices -----------------------------------------------------------------------------
    def thread_index(self, name: str, args: list, span):
        """The value of a thread-index call for the current thread."""
        t = self.ctx.tid
        if t is None:
            raise LoweringError(f"T.{name} is read where the CPU backend runs the block once (outside the "
                                "threads' phases)", span)
        tirx, ints = self.tirx, [as_int(a) for a in args]
        if name == "get_thread_binding":
            dim = ints[0] if ints else 0
            if dim >= len(self.extents):
                return const(0, "int32")
            stride = const(1, "int32")
            for e in self.extents[:dim]:
                stride = stride * e
            q = t if dim == 0 else tirx.floordiv(t, stride)
            return q if dim == len(self.extents) - 1 else tirx.floormod(q, self.extents[dim])
        warp = const(ints[0] if ints else 32, "int32")
        if name == "get_lane_idx":
            return tirx.floormod(t, warp)
        if name in ("get_warp_idx", "get_warp_idx_sync"):
            return tirx.floordiv(t, warp)
        group = tirx.floordiv(t, const(128, "int32"))
        if name == "get_warp_group_idx":
            per = ints[1] if len(ints) > 1 else 4
            return tirx.floordiv(t, warp * const(per, "int32"))
        out = None
        for g in ints:
            eq = tirx.EQ(group, const(g, "int32"))
            out = eq if out is None else tirx.Or(out, eq)
        return out if out is not None else const(False, "bool")

    # -- phases -------------------------------------------------------------------------------------
    def block(self, body, mask=None) -> list:
        """A statement list as barrier phases (per-thread runs) and block-level statements. A run also ends
        before a statement that reads shared memory the run wrote or writes what it read or wrote (where TileLang
        inserts __syncthreads() by itself)."""
        out, run, touched = [], [], (set(), set())
        for s in flat_stmts(body):
            if run and not is_collective(s) and self._per_thread(s) and conflicts(touched, shared_rw(s)):
                out += self._phase(run, mask)
                run, touched = [], (set(), set())
            if is_collective(s):  # a phase of its own: every lane's operands are ready, none is overwritten yet
                out += self._phase(run, mask) + (self._shuffle_phases(s, mask) if is_shuffle(s) else
                                                 self._phase([s], mask))
                run = []
            elif is_barrier(s) or isinstance(s, N.Allocate) or has_phases(s) or self._holds_role(s) \
                    or not self._per_thread(s):
                out += self._phase(run, mask)
                run, touched = [], (set(), set())
                if not is_barrier(s):
                    control = has_phases(s) or self._holds_role(s)
                    out += self._control(s, mask) if control else self._barrier_free(s, mask)
                elif self.barriers is not None:
                    out += self.barriers.statement(s, mask)
            else:
                run.append(s)
                reads, writes = shared_rw(s)
                touched[0].update(reads)
                touched[1].update(writes)
        return out + self._phase(run, mask)

    def _shuffle_phases(self, s, mask) -> list:
        """A store whose value shuffles between lanes: every thread computes its value (reading the lanes it
        names), then every thread stores it, so no lane reads a value another has already overwritten."""
        if isinstance(s, N.LetStmt):
            self.thread_vars.add(s.var)
            return self._phase([s], mask)
        value = N.Var(self.ctx.fresh("shuffled").name, s.buffer.dtype, "let", s.span)
        self.thread_vars.add(value)
        return self._phase([N.LetStmt(value, s.value, s.span)], mask) + self._phase(
            [N.Store(s.buffer, s.indices, value, s.span)], mask)

    def shuffle(self, e: N.Call):
        """The value a warp shuffle gives the current thread: its operand evaluated on the source lane."""
        tirx, ctx, t = self.tirx, self.ctx, self.ctx.tid
        if t is None:
            raise LoweringError(f"T.{e.name} is read outside the threads' phases", e.span)
        if e.name == "tvm_warp_shuffle":
            _, value, lane, width = e.args[:4]
        else:
            value, lane, width = e.args[:3]
        width = ctx.index(width)
        base, own = t - tirx.floormod(t, width), tirx.floormod(t, width)
        delta = ctx.index(lane)
        src = {"tvm_warp_shuffle": lambda: tirx.floormod(delta, width),
               "shfl_sync": lambda: tirx.floormod(delta, width),
               "shfl_xor": lambda: tirx.floormod(tirx.bitwise_xor(own, delta), width),
               "shfl_down": lambda: tirx.Select(own + delta < width, own + delta, own),
               "shfl_up": lambda: tirx.Select(own - delta >= 0, own - delta, own)}[e.name]()
        saved, ctx.tid = ctx.tid, base + src
        try:
            return ctx.expr(value)
        finally:
            ctx.tid = saved

    def _is_role(self, s) -> bool:
        """An `if` on the thread around tile ops (`with T.ws(1): T.gemm(...)`): the threads that take it do
        each tile op together, once."""
        return isinstance(s, N.If) and self.depends(s.cond) and any(isinstance(n, N.TILE_OPS) for n in walk(s))

    def _holds_role(self, s) -> bool:
        """A role, or a loop / sequence with a role inside (`for ko: with T.ws(1): T.gemm(...)`): block-level
        control, so each tile op in it runs once per iteration rather than once per thread."""
        return self._is_role(s) or isinstance(s, (N.For, N.While, N.SeqStmt)) and any(
            self._is_role(n) for n in walk(s) if isinstance(n, N.If))

    def _per_thread(self, s) -> bool:
        if isinstance(s, N.LetStmt) and self.depends(s.value):
            self.thread_vars.add(s.var)
        if self._cooperative(s):
            return False  # the block's op: indices read from thread storage are thread 0's (all threads agree)
        return self.depends(s)

    def _cooperative(self, s) -> bool:
        """A tile op the threads do together (not an element atomic) on shared or fragment tiles whose indices read
        thread storage (`A_s[stage, :, :]` with `stage = T.alloc_var(...)`) but no thread index."""
        if not isinstance(s, N.TILE_OPS) or isinstance(s, N.AtomicAdd) and not isinstance(s.value, N.Region):
            return False
        if any(self.is_private(r.buffer) for rs in op_regions(s) for r in rs):
            return False
        return not any(isinstance(n, N.Call) and (n.name in THREAD_CALLS or n.name in RNG_CALLS)
                       or isinstance(n, N.Var) and n in self.thread_vars for n in walk(s))

    def _phase(self, run: list, mask) -> list:
        """`for t in range(threads)` around a run of per-thread statements (masked when inside a role)."""
        if not run:
            return []
        tirx, ctx = self.tirx, self.ctx
        if len(run) == 1 and isinstance(run[0], N.For) and not self._bounds_depend(run[0]) and not (
                run[0].kind == "parallel" and draws(run[0])):  # a drawing T.Parallel loop: its CUDA iterations
            # threads between two barriers may run in any order: the thread loop goes inside the phase's loop
            # nest, so consecutive threads touch neighbouring elements (contiguous, vectorisable accesses)
            return [ctx.loops(run[0], 0, lambda body: self._seq(self._phase(flat_stmts(body), mask)))]
        allocs = []
        t = ctx.fresh("t")
        ctx.analyzer.bind(t, ctx.ir.Range.from_min_extent(0, self.total))
        saved, ctx.tid = ctx.tid, t
        try:
            body = []
            for s in run:
                if isinstance(s, N.LetStmt):  # per-thread slots, read by later phases too (and by later lets here)
                    mark = ctx.draw_mark()
                    value = ctx.expr(s.value)
                    slot = tirx.decl_buffer((self.total,), str(value.ty), ctx.fresh(s.var.name).name, scope="global")
                    allocs.append(tirx.AllocBuffer(slot))
                    body += ctx.draws_before(mark, [tirx.BufferStore(slot, value, [t])])
                    ctx.vars[s.var] = Late(lambda slot=slot: tirx.BufferLoad(slot, [ctx.tid]))
                else:
                    body += ctx.stmts(s)
            stmt = body[0] if len(body) == 1 else tirx.SeqStmt(body)
            if mask is not None:
                stmt = tirx.IfThenElse(tirx.NE(tirx.BufferLoad(mask[0], [t]), const(0, "int8")), stmt, None)
        finally:
            ctx.tid = saved
        return allocs + [tirx.For(t, const(0, "int32"), self.total, tirx.ForKind.SERIAL, stmt)]

    def _bounds_depend(self, s: N.For) -> bool:
        return any(self.depends(e) for e in s.starts + s.extents + ((s.step,) if s.step is not None else ()))

    def _barrier_free(self, s, mask) -> list:
        """A block-level statement: once per block (once when any thread of the active mask is set)."""
        saved, self.ctx.tid = self.ctx.tid, const(0, "int32") if self._cooperative(s) else self.ctx.tid
        try:
            stmts = self.ctx.stmts(s)
        finally:
            self.ctx.tid = saved
        if mask is None or isinstance(s, N.Allocate) or not stmts:
            return stmts
        body = stmts[0] if len(stmts) == 1 else self.tirx.SeqStmt(stmts)
        return [self.tirx.IfThenElse(self.tirx.NE(self.tirx.BufferLoad(mask[1], [0]), const(0, "int8")), body, None)]

    def _control(self, s, mask) -> list:
        """A loop or branch with barriers inside: block-level control around phases."""
        if isinstance(s, N.SeqStmt):
            return self.block(s, mask)
        if isinstance(s, N.For):
            return [self.ctx.loops(s, 0, lambda body: self._seq(self.block(body, mask)), self.uniform)]
        if isinstance(s, N.While):
            return [self.tirx.While(as_bool(self.uniform(s.cond)), self._seq(self.block(s.body, mask)))]
        if isinstance(s, N.If):
            if not self.depends(s.cond):
                other = self._seq(self.block(s.else_body, mask)) if s.else_body is not None else None
                return [self.tirx.IfThenElse(as_bool(self.ctx.expr(s.cond)), self._seq(self.block(s.then_body, mask)),
                                             other)]
            return self._role(s, mask)
        raise LoweringError(f"a barrier inside {type(s).__name__} is not supported by the CPU backend", s.span)

    def uniform(self, e):
        """An expression every thread agrees on at a barrier: thread 0's value when it reads thread state."""
        if not self.depends(e):
            return self.ctx.expr(e)
        saved, self.ctx.tid = self.ctx.tid, const(0, "int32")
        try:
            return self.ctx.expr(e)
        finally:
            self.ctx.tid = saved

    def _role(self, s: N.If, mask) -> list:
        """`if` on the thread with barriers inside: per-thread masks for the then- and else-branches, run in turn,
        or as coroutines (cpu/coroutines.py) when the block's roles wait on each other."""
        if self.barriers is not None and yields(s):
            return RoleScheduler(self, self.barriers).lower(s, mask)
        out = []
        then_mask, out_then = self.mask(s.cond, mask, negate=False, span=s.span)
        out += out_then + self.block(s.then_body, then_mask)
        if s.else_body is not None:
            else_mask, out_else = self.mask(s.cond, mask, negate=True, span=s.span)
            out += out_else + self.block(s.else_body, else_mask)
        return out

    def mask(self, cond, parent, negate: bool, span):
        """Buffers (per-thread active flags, any-active flag) for a branch, and the statements that fill them."""
        tirx, ctx = self.tirx, self.ctx
        flags = tirx.decl_buffer((self.total,), "int8", ctx.fresh("active").name, scope="global")
        anyf = tirx.decl_buffer((1,), "int8", ctx.fresh("any_active").name, scope="global")
        t = ctx.fresh("t")
        saved, ctx.tid = ctx.tid, t
        try:
            c = as_bool(ctx.expr(cond))
        finally:
            ctx.tid = saved
        if negate:
            c = tirx.Not(c)
        if parent is not None:
            c = tirx.And(tirx.NE(tirx.BufferLoad(parent[0], [t]), const(0, "int8")), c)
        value = cast(c, "int8")
        fill = tirx.SeqStmt([tirx.BufferStore(flags, value, [t]),
                             tirx.BufferStore(anyf, tirx.Max(tirx.BufferLoad(anyf, [0]), value), [0])])
        stmts = [tirx.AllocBuffer(flags), tirx.AllocBuffer(anyf), tirx.BufferStore(anyf, const(0, "int8"), [0]),
                 tirx.For(t, const(0, "int32"), self.total, tirx.ForKind.SERIAL, fill)]
        return (flags, anyf), stmts

    def _seq(self, stmts: list):
        if not stmts:
            return self.tirx.Evaluate(const(0, "int32"))
        return stmts[0] if len(stmts) == 1 else self.tirx.SeqStmt(stmts)

    # -- private storage ----------------------------------------------------------------------------
    def is_private(self, buf: N.Buffer) -> bool:
        """True when each thread has its own copy of `buf`."""
        return buf.scope in PRIVATE_SCOPES or buf in self.private_fragments

    def private_rows(self, buf: N.Buffer):
        """The first-axis extent of one thread's copy of a private buffer."""
        return self.ctx.index(buf.shape[0]) if buf.shape else const(1, "int32")
