"""T.rng_init / T.rng_rand / T.rng_rand_float on the CPU backend: each emulated thread's Philox4x32-10 generator
(curand's state semantics, codegen/philox.py), written out in TIR so that it draws what our CUDA lowering draws.

- A block that uses them is thread-level (cpu/simt.py): every thread has its own state row of `rng_state`
  (counter, key, the four outputs of the counter, the index of the next one, four words for the rounds).
- `T.rng_init(seed, seq, off)` fills the row: key = seed, counter = (off // 4, seq), index = off % 4, outputs
  computed. Without a seq the thread's subsequence is threadIdx.x + blockIdx.x * blockDim.x, as on the GPU.
- A draw is an expression with a side effect: the statement that reads it is preceded by the draw (the next output
  copied into a per-block word of `rng_drawn`, the index advanced, the counter stepped and the outputs recomputed
  after the fourth), and reads the word. Draws of one statement go left to right.
- A T.Parallel loop that draws gives each thread the iterations our CUDA lowering gives it (no fragment inside:
  flat iteration `it * threads + tx`, `it` ascending), so each value lands where it lands on the GPU.
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.visitor import walk
from .. import philox
from .expr import LoweringError, cast, const, dtype_of
from .wrap import wrapping

DRAW_CALLS = philox.DRAW_CALLS
RNG_CALLS = DRAW_CALLS | {"rng_init"}
COUNTER, KEY, OUTPUT, INDEX, SCRATCH, WORDS = 0, 4, 6, 10, 11, 15  # a thread's state row


def uses_rng(node) -> bool:
    """True when `node` seeds or draws from a generator."""
    return any(isinstance(n, N.Call) and n.name in RNG_CALLS for n in walk(node))


def draws(node) -> bool:
    """True when `node` draws from a generator (T.rng_rand / T.rng_rand_float)."""
    return any(isinstance(n, N.Call) and n.name in DRAW_CALLS for n in walk(node))


def _refuse_conditional_draws(body) -> None:
    """A draw in a branch of T.if_then_else or past the first operand of `and` / `or` runs only when that operand is
    evaluated on the GPU; here draws go before their statement, so such a draw is refused."""
    for n in walk(body):
        operands = (n.true_value, n.false_value) if isinstance(n, N.Select) else n.values[1:] if isinstance(
            n, N.BoolOp) else ()
        if any(draws(e) for e in operands):
            raise LoweringError("T.rng_rand in a branch of T.if_then_else or after `and` / `or` is not supported by "
                                "the CPU backend (the GPU draws only when that operand is evaluated); draw inside "
                                "an `if` statement instead (`if c: A[i] = T.rng_rand()`)", n.span)


def _u64(x):
    return cast(x, "uint64")


class RngLowering:
    """The generators of one thread-level block; `ctx` is the CpuLowering, its `tid` the thread being lowered."""

    def __init__(self, ctx, launch: N.Launch):
        tirx = self.tirx = ctx.tirx
        self.ctx, self.launch = ctx, launch
        _refuse_conditional_draws(launch.body)
        count = sum(1 for n in walk(launch.body) if isinstance(n, N.Call) and n.name in DRAW_CALLS)
        self.state = tirx.decl_buffer((ctx.simt.total, WORDS), "uint32", ctx.fresh("rng_state").name, scope="global")
        self.drawn = tirx.decl_buffer((max(count, 1),), "uint32", ctx.fresh("rng_drawn").name, scope="global")
        self.pending: list = []  # draws made by the expressions lowered since each statement's mark

    def allocations(self) -> list:
        """The per-block buffers, before the block's statements."""
        return [self.tirx.AllocBuffer(self.state), self.tirx.AllocBuffer(self.drawn)]

    def mark(self) -> int:
        """Where the draws of the statement about to be lowered start."""
        return len(self.pending)

    def before(self, mark: int, stmts: list) -> list:
        """`stmts` preceded by the draws their expressions made since `mark`."""
        prefix = self.pending[mark:]
        del self.pending[mark:]
        return prefix + stmts

    def finish(self, span) -> None:
        """Raise when a draw was read where no statement can go before it (a loop bound or a condition around
        barriers, which every thread evaluates as one)."""
        if self.pending:
            raise LoweringError("T.rng_rand is read in a loop bound or a condition around barriers, which the CPU "
                                "backend evaluates once for all threads; draw into a variable first", span)

    # -- state --------------------------------------------------------------------------------------
    def _thread(self, span):
        if self.ctx.tid is None:
            raise LoweringError("a random number is drawn where the CPU backend runs the block once (outside the "
                                "threads' phases)", span)
        return self.ctx.tid

    def _word(self, t, k):
        return self.tirx.BufferLoad(self.state, [t, const(k, "int32")])

    def _set(self, t, k, value):
        return self.tirx.BufferStore(self.state, self._lo(value), [t, const(k, "int32")])

    def _lo(self, x):
        """The low 32 bits of a uint32 or uint64 (masked first: TVM folds a narrowing cast of a constant only when
        the value fits)."""
        if dtype_of(x) == "uint32":
            return x
        return cast(self.tirx.bitwise_and(x, const(philox.MASK32, "uint64")), "uint32")

    def _hi(self, p):
        return cast(self.tirx.shift_right(p, const(32, "uint64")), "uint32")

    def _round(self, t, src: int, dst: int, j) -> list:
        """One Philox round from the four words at `src` to those at `dst`, with the key of round `j`."""
        tirx = self.tirx
        c0, c1, c2, c3 = (self._word(t, src + w) for w in range(4))
        k0 = _u64(self._word(t, KEY)) + _u64(j) * const(philox.W0, "uint64")
        k1 = _u64(self._word(t, KEY + 1)) + _u64(j) * const(philox.W1, "uint64")
        p0, p1 = _u64(c0) * const(philox.M0, "uint64"), _u64(c2) * const(philox.M1, "uint64")
        return [self._set(t, dst, tirx.bitwise_xor(tirx.bitwise_xor(self._hi(p1), c1), self._lo(k0))),
                self._set(t, dst + 1, p1),
                self._set(t, dst + 2, tirx.bitwise_xor(tirx.bitwise_xor(self._hi(p0), c3), self._lo(k1))),
                self._set(t, dst + 3, p0)]

    def _refill(self, t) -> list:
        """The four outputs of the current counter: ten rounds, alternating between the output and scratch words."""
        tirx, ctx = self.tirx, self.ctx
        r = ctx.fresh("round")
        ctx.analyzer.bind(r, ctx.ir.Range.from_min_extent(0, philox.ROUNDS // 2))
        rounds = self._round(t, OUTPUT, SCRATCH, r * 2) + self._round(t, SCRATCH, OUTPUT, r * 2 + 1)
        loop = tirx.For(r, const(0, "int32"), const(philox.ROUNDS // 2, "int32"), tirx.ForKind.SERIAL,
                        tirx.SeqStmt(rounds))
        return [self._set(t, OUTPUT + w, self._word(t, COUNTER + w)) for w in range(4)] + [loop]

    def _step_counter(self, t):
        """counter += 1, carrying over the four words."""
        tirx, stmt = self.tirx, None
        for w in reversed(range(4)):
            # wrapping (cpu/wrap.py): TVM emits uint32 adds as `add nuw`, and LLVM would fold the carry test after one
            bump = self._set(t, COUNTER + w, wrapping("+", self._word(t, COUNTER + w), const(1, "uint32"), "uint32"))
            if stmt is not None:
                carry = tirx.IfThenElse(tirx.EQ(self._word(t, COUNTER + w), const(0, "uint32")), stmt, None)
                bump = tirx.SeqStmt([bump, carry])
            stmt = bump
        return stmt

    # -- T.rng_init, T.rng_rand, T.rng_rand_float -----------------------------------------------------
    def init(self, call: N.Call) -> list:
        """`T.rng_init(seed, seq, off)` for the current thread (seq `Const(-1)`: the default subsequence)."""
        t, ctx = self._thread(call.span), self.ctx
        seed, seq, off = call.args
        seed, off = _u64(ctx.expr(seed)), _u64(ctx.expr(off))
        seq = self._default_subsequence(t) if isinstance(seq, N.Const) and seq.value == -1 else _u64(ctx.expr(seq))
        quarter, shift = self.tirx.shift_right(off, const(2, "uint64")), const(32, "uint64")
        words = [quarter, self.tirx.shift_right(quarter, shift), seq, self.tirx.shift_right(seq, shift),
                 seed, self.tirx.shift_right(seed, shift)]
        stmts = [self._set(t, COUNTER + k, w) for k, w in enumerate(words)]
        stmts.append(self._set(t, INDEX, self.tirx.bitwise_and(off, const(3, "uint64"))))
        return stmts + self._refill(t)

    def _default_subsequence(self, t):
        """threadIdx.x + blockIdx.x * blockDim.x (threadIdx.x: the flat thread id modulo the first thread extent)."""
        simt, tirx = self.ctx.simt, self.tirx
        threads_x = simt.extents[0]
        thread_x = t if len(simt.extents) == 1 else tirx.floormod(t, threads_x)
        block_vars = self.launch.block_vars
        block_x = self.ctx.vars[block_vars[0]] if block_vars else const(0, "int32")
        return _u64(thread_x) + _u64(block_x) * _u64(threads_x)

    def draw(self, call: N.Call):
        """The next output of the current thread's generator (a uint32, or curand_uniform's float32 of it), drawn
        by a statement queued before the one being lowered."""
        tirx, t = self.tirx, self._thread(call.span)
        k = const(len(self.pending), "int32")
        index = self._word(t, INDEX)
        take = tirx.BufferStore(self.drawn, tirx.BufferLoad(self.state, [t, const(OUTPUT, "int32") +
                                                                         cast(index, "int32")]), [k])
        advance = tirx.IfThenElse(tirx.EQ(self._word(t, INDEX), const(4, "uint32")), tirx.SeqStmt(
            [self._step_counter(t)] + self._refill(t) + [self._set(t, INDEX, const(0, "uint32"))]), None)
        self.pending.append(tirx.SeqStmt([take, self._set(t, INDEX, index + const(1, "uint32")), advance]))
        value = tirx.BufferLoad(self.drawn, [k])
        if call.name == "rng_rand_float":
            return cast(value, "float32") * const(philox.UNIFORM_SCALE, "float32") + const(philox.UNIFORM_SHIFT,
                                                                                            "float32")
        return value

    def parallel(self, s: N.For):
        """A T.Parallel loop that draws, for the current thread: the iterations our CUDA lowering gives it."""
        tirx, ctx = self.tirx, self.ctx
        t = self._thread(s.span)
        if any(isinstance(n, (N.Load, N.Store)) and n.buffer.scope == "local.fragment" for n in walk(s.body)):
            raise LoweringError("T.rng_rand inside a T.Parallel loop over a fragment is not supported by the CPU "
                                "backend (its iterations follow the fragment's GPU layout); draw in a T.Parallel loop "
                                "without fragments or in a serial loop", s.span)
        threads = ctx.simt.total
        extents = [ctx.index(e) for e in s.extents]
        total = extents[0]
        for e in extents[1:]:
            total = total * e
        it = ctx.fresh("it")
        ctx.analyzer.bind(it, ctx.ir.Range.from_min_extent(0, tirx.floordiv(total + threads - 1, threads)))
        flat, stride = it * threads + t, None
        for v, st, ext in reversed(list(zip(s.vars, s.starts, extents))):
            q = flat if stride is None else tirx.floordiv(flat, stride)
            coord = tirx.floormod(q, ext)
            start = ctx.index(st)
            ctx.vars[v] = coord if isinstance(start, tirx.IntImm) and int(start) == 0 else start + coord
            stride = ext if stride is None else stride * ext
        body = ctx.stmts(s.body)
        body = body[0] if len(body) == 1 else tirx.SeqStmt(body) if body else tirx.Evaluate(const(0, "int32"))
        return tirx.For(it, const(0, "int32"), tirx.floordiv(total + threads - 1, threads), tirx.ForKind.SERIAL,
                        tirx.IfThenElse(tirx.LT(flat, total), body, None))
