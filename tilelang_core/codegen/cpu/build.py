"""The CPU backend: a block-level lowering of the tile IR to TVM TIR, built with LLVM.

The grid becomes loops (the outermost `ForKind.PARALLEL`); shared, fragment and local buffers become
per-block scratch buffers; each tile op becomes a whole-tile loop nest (`cpu_ops`); threads, barriers and
pipelining disappear. Symbolic dims (`T.dynamic`) are TIR vars bound from the tensors' shapes.
This is the reference semantics of a tile program.
"""
from __future__ import annotations

from ...diagnostics import CompileError, Diagnostic, Severity
from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.safe_values import safe_values
from ...ir.visitor import walk
from ...language.packing import per_byte
from ...source import Span
from ..tvm_loader import load
from .allreduce import REDUCE_CALLS, allreduce_value
from .atomic_value import VALUE_ATOMICS, hoist_value_atomics, reads_value_atomic, updated
from .cpasync import cp_async
from .expr import FP8, LoweringError, as_bool, cast, const, dtype_of, fp8_bits, from_fp8_bits, index_expr, match
from .grid_sync import BLOCK_CALLS, BlockIndex, grid_phases
from .lower_expr import ExprLowerer
from .mma import fragment_load, mma_sync
from .ops import VECTOR_ATOMICS, OpLowering, dp4a_store, vector_atomic_stores
from .printing import PRINT_CALLS, device_print
from .packed import PackedParam, packed_dtype_supported
from .rng import DRAW_CALLS, RngLowering, draws, uses_rng
from .role_order import THREAD_CALLS
from .simt import ThreadEmulation
from .simt_stmts import BARRIER_CALLS, SHUFFLE_CALLS, is_thread_level
from .storage import SCRATCH_SCOPE, StorageLowering
# calls that only steer GPU code generation, synchronise threads or trace GPU events: nothing to do on the CPU
HINTS = frozenset({
    "sync_threads", "sync_warp", "syncwarp", "sync_grid", "sync_global", "tvm_storage_sync", "fence_proxy_async",
    "no_set_max_nreg", "set_max_nreg", "inc_max_nreg", "dec_max_nreg", "disable_warp_group_reg_alloc", "wait_wgmma",
    "finalize_reducer", "annotate_l2_hit_ratio", "annotate_padding",
    "use_swizzle", "annotate_safe_value", "assume", "cluster_arrive", "tma_store_arrive", "tma_store_wait",
    "pdl_trigger", "pdl_sync", "loop_break_hint", "iket_event", "ptx_commit_group", "ptx_wait_group",
}) | BARRIER_CALLS
ATOMIC_CALLS = frozenset({"atomic_max", "atomic_min", "atomic_or"})  # Evaluate(Call(name, (dst element, value)))
SERIAL_CALLS = ATOMIC_CALLS | VALUE_ATOMICS | VECTOR_ATOMICS.keys()  # the blocks of a kernel with these run in turn


class CpuLowering(StorageLowering):
    """One kernel instance → one tirx.PrimFunc."""

    def __init__(self, func: N.PrimFunc):
        ns = load()
        self.func = func
        self.tirx = ns.tirx
        self.ir = ns.ir
        from tvm.sym.analyzer import Analyzer

        self.analyzer = Analyzer()
        self.vars: dict = {}
        self.buffers: dict = {}
        self.expr = ExprLowerer(self.vars, self.buffers, load_hook=self._load_hook, call_hook=self._call_hook)
        self.expr.view_hook = self.view
        self.fp8_bits: dict = {}  # fp8 tensor parameter -> a uint8 view of it, read and decoded bit-exactly
        # tirx buffer of fp8 elements -> (its uint8 bits buffer, the fp8 dtype): every read decodes the bits and
        # every write stores the code, never TVM's fp8 conversions (they garble zero and subnormals)
        self.fp8_elements: dict = {}
        self.fp8_reads: dict = {}  # a decoded fp8 read -> (its bits, its dtype): stored back as that dtype, the bits
        self.packed: dict = {}  # packed sub-byte tensor parameter -> its PackedParam (cpu/packed.py)
        self._packed_dims: list = []  # (symbolic last dim, its tensor's byte count var, values per byte)
        self.views: dict = {}  # base buffer -> the views (T.view / T.reshape) over it, declared with the base
        self._view_bases: dict = {}  # tirx view buffer -> tirx base buffer
        for n in walk(func.body):
            view = getattr(n, "buffer", None)
            if isinstance(view, N.Buffer) and view.base is not None:
                self.views.setdefault(view.base, {})[view] = None
        self.ops = OpLowering(self)
        self.simt: ThreadEmulation | None = None  # set inside a thread-level block
        self.tid = None  # the thread id being lowered inside a thread-level block's phase
        self.blocks = None  # grid_sync.BlockIndex of the launch being lowered
        self.rng: RngLowering | None = None  # the threads' generators of a block that uses T.rng_* (cpu/rng.py)
        self.serial_grid = any(isinstance(n, N.AtomicAdd) or isinstance(n, N.Call) and n.name in SERIAL_CALLS
                               for n in walk(func.body))
        self._names: dict[str, int] = {}
        self._safe: list | None = None  # (tirx tensor, N value) of T.annotate_safe_value, built at the first read

    # -- helpers used by cpu_ops ------------------------------------------------------------------
    def fresh(self, name: str, dtype: str = "int32"):
        """A new tirx Var with a readable, unique name."""
        n = self._names.get(name, 0)
        self._names[name] = n + 1
        return self.tirx.Var(name if n == 0 else f"{name}_{n}", dtype)

    def loop_var(self, name: str, extent):
        """A fresh loop variable as wide as `extent` (int64 when it is: TVM refuses a narrower loop var)."""
        return self.fresh(name, "int64" if dtype_of(self.as_expr(extent)) == "int64" else "int32")

    def index(self, e):
        """Lower an index expression (int32 unless it is int64)."""
        return index_expr(self.expr(e))

    def as_expr(self, v):
        """An int or tirx expr as a tirx expr."""
        return const(v, "int32") if isinstance(v, int) else v

    def loop_nest(self, dims, body_fn, kind=None):
        """Serial loops over [(name, extent)], innermost body from body_fn(vars)."""
        vars_ = [self.loop_var(name, ext) for name, ext in dims]
        for v, (_, ext) in zip(vars_, dims):
            self.analyzer.bind(v, self.ir.Range.from_min_extent(0, self.as_expr(ext)))
        body = body_fn(vars_)
        if isinstance(body, list):
            body = body[0] if len(body) == 1 else self.tirx.SeqStmt(body)
        for v, (_, ext) in reversed(list(zip(vars_, dims))):
            body = self.tirx.For(v, const(0, dtype_of(v)), self.as_expr(ext), kind or self.tirx.ForKind.SERIAL, body)
        return body

    def _in_bounds(self, buf, idx):
        """The condition that `idx` lies inside `buf`, or None when provably true."""
        conds = []
        for i, extent in zip(idx, buf.ty.shape):
            i, extent = match(i, extent)  # an int64 extent (a tensor past int32) compares in 64 bits
            for c in (self.tirx.GE(i, const(0, dtype_of(i))), self.tirx.LT(i, extent)):
                if not self.analyzer.can_prove(c):
                    conds.append(c)
        if not conds:
            return None
        out = conds[0]
        for c in conds[1:]:
            out = self.tirx.And(out, c)
        return out

    def fp8_read(self, bits, dtype: str):
        """The float32 value of fp8 `bits` read from memory (stored back as `dtype`, the same bits: a copy keeps
        ±inf and NaN where a cast from float would saturate)."""
        value = from_fp8_bits(bits, dtype)
        self.fp8_reads[value] = (bits, dtype)
        return value

    def fp8_code(self, value, dtype: str):
        """The uint8 code that stores `value` as fp8 `dtype` (see `fp8_read` and `expr.fp8_bits`)."""
        bits, src = self.fp8_reads.get(value, (None, None))
        return bits if src == dtype else fp8_bits(value, dtype)

    def element_dtype(self, buf) -> str:
        """The dtype of a tirx buffer's elements (fp8 for a buffer stored as uint8 bits)."""
        return self.fp8_elements[buf][1] if buf in self.fp8_elements else str(buf.ty.dtype)

    def guarded_load(self, buf, idx, is_global: bool = True):
        """buf[idx], or 0 when the index may fall outside the buffer (scratch buffers too: a bad index must
        never corrupt memory; provable accesses get no guard)."""
        if buf in self.fp8_elements:  # the bits, decoded (0 outside)
            bits, dtype = self.fp8_elements[buf]
            value, cond = self.tirx.BufferLoad(bits, idx), self._in_bounds(bits, idx)
            return self.fp8_read(value if cond is None else self.tirx.if_then_else(cond, value, const(0, "uint8")),
                                 dtype)
        value = self.tirx.BufferLoad(buf, idx)
        cond = self._in_bounds(buf, idx)
        if cond is None:
            return value
        return self.tirx.if_then_else(cond, value, self._safe_value(buf) if is_global else const(0, str(buf.ty.dtype)))

    def _safe_value(self, buf):
        """What a read outside global tensor `buf` gives: its T.annotate_safe_value, else 0."""
        if self._safe is None:
            self._safe = [(self.buffers[b], v) for b, v in safe_values(self.func.body).items() if b in self.buffers]
        value = next((v for b, v in self._safe if b.same_as(buf)), None)
        return const(0, str(buf.ty.dtype)) if value is None else cast(self.expr(value), str(buf.ty.dtype))

    def guarded_store(self, buf, idx, value, is_global: bool = True):
        """buf[idx] = value, skipped when the index may fall outside the buffer."""
        if buf in self.fp8_elements:
            buf, dtype = self.fp8_elements[buf]
            value = self.fp8_code(value, dtype)
        store = self.tirx.BufferStore(buf, value, idx)
        cond = self._in_bounds(buf, idx)
        return store if cond is None else self.tirx.IfThenElse(cond, store, None)

    def _load_hook(self, e: N.Load, buf, idx):
        if e.buffer in self.packed:
            return self.packed[e.buffer].load(idx)
        return self.guarded_load(buf, self.private(e.buffer, idx, e.span), e.buffer.scope == "global")

    def _call_hook(self, e: N.Call, args):
        if e.name in DRAW_CALLS and self.rng is not None:
            return self.rng.draw(e)
        if e.name in SHUFFLE_CALLS and self.simt is not None:
            return self.simt.shuffle(e)
        if e.name in REDUCE_CALLS and self.simt is not None:
            return allreduce_value(self.simt, e)
        if e.name in BLOCK_CALLS:
            if self.blocks is None:
                raise LoweringError(f"T.{e.name} is used outside a T.Kernel block", e.span)
            return self.blocks.call(e.name, [as_int(a) for a in e.args])
        if e.name not in THREAD_CALLS:
            return None
        if self.simt is None:
            raise LoweringError(f"T.{e.name} is used outside a T.Kernel block", e.span)
        return self.simt.thread_index(e.name, list(e.args), e.span)

    # -- function ---------------------------------------------------------------------------------
    def run(self):
        """Lower the whole function to a tirx.PrimFunc with `global_symbol` = the kernel's name."""
        for p in self.func.params:  # scalars first: a tensor shape may use one
            if isinstance(p, N.Var):
                self._param(p)
        for d in (d for p in self.func.params if isinstance(p, N.Buffer) for d in p.shape):
            if isinstance(d, N.Var):  # then every bare dim: an earlier tensor's shape may use it (seq_len * heads)
                self._symbol(d)
        params = [self.vars[p] if isinstance(p, N.Var) else self._param(p) for p in self.func.params]
        body = self._block(self.func.body)
        binds = self._packed_dim_binds()
        if binds:
            body = self.tirx.SeqStmt(binds + [body])
        decls = [d for p in self.func.params if isinstance(p, N.Buffer) for d in self.declare_views(p)]
        decls += [self.tirx.DeclBuffer(bits, data=self.buffers[p].data) for p, bits in self.fp8_bits.items()]
        if decls:
            body = self.tirx.SeqStmt(decls + [body])
        prim = self.tirx.PrimFunc(params, body)
        # tensors T.annotate_restrict_buffers says may alias: LLVM must not assume any two pointers are distinct
        return prim.with_attr("global_symbol", self.func.name).with_attr("tirx.noalias", not self.func.non_restrict)

    def _symbol(self, v: N.Var):
        if v not in self.vars:
            self.vars[v] = self.tirx.Var(v.name, v.dtype if v.dtype.startswith("int") else "int32")
        return self.vars[v]

    def _param(self, p):
        """A scalar Var param, or a buffer whose bare symbolic dims become TIR vars bound from the tensor."""
        if isinstance(p, N.Var):
            var = self.tirx.Var(p.name, self._dtype(p.dtype, p.name, p.span))
            self.vars[p] = var
            return var
        for d in p.shape:
            if isinstance(d, N.Var):
                self._symbol(d)
        shape = [self.index(d) for d in p.shape]
        if per_byte(p.dtype) > 1:
            return self._packed_param(p, shape)
        buf = self.tirx.decl_buffer(shape, self._dtype(p.dtype, p.name, p.span), p.name)
        self.buffers[p] = buf
        if p.dtype in FP8:
            self.fp8_bits[p] = self.tirx.decl_buffer(shape, "uint8", p.name + "_bits")
            self.fp8_elements[buf] = (self.fp8_bits[p], p.dtype)
        return buf

    def _packed_param(self, p: N.Buffer, shape: list):
        """A packed sub-byte tensor: a uint8 buffer whose last dim is the tensor's byte count (the JIT checked it
        against the logical shape); a bare symbolic last dim is bound from it (cpu/packed.py)."""
        if not packed_dtype_supported(p.dtype):
            raise LoweringError(f"'{p.name}' has dtype {p.dtype}, which the CPU backend cannot pack (it reads and "
                                "writes sub-byte integers and float4_e2m1fn)", p.span)
        count = self.fresh(f"{p.name}_bytes")
        packed = PackedParam(self, p, shape[:-1] + [count])
        self.packed[p] = packed
        self.buffers[p] = packed.bytes
        if isinstance(p.shape[-1], N.Var):
            self._packed_dims.append((p.shape[-1], count, packed.per_byte))
        return packed.bytes

    def _packed_dim_binds(self) -> list:
        """Bind statements for the symbolic dims that only a packed tensor's last dim carries."""
        bare = {d for p in self.func.params if isinstance(p, N.Buffer)
                for k, d in enumerate(p.shape) if isinstance(d, N.Var) and (p not in self.packed or k < len(p.shape) - 1)}
        bare |= {p for p in self.func.params if isinstance(p, N.Var)}
        out, done = [], set()
        for dim, count, k in self._packed_dims:
            if dim in bare or dim in done:
                continue
            done.add(dim)
            out.append(self.tirx.Bind(self.vars[dim], cast(count * const(k, dtype_of(count)), dtype_of(self.vars[dim]))))
        return out

    # -- statements ----------------------------------------------------------------------------------
    def _block(self, s):
        stmts = self.stmts(s)
        if not stmts:
            return self.tirx.Evaluate(const(0, "int32"))
        return stmts[0] if len(stmts) == 1 else self.tirx.SeqStmt(stmts)

    def stmts(self, s) -> list:
        """Lower one statement to a list of tirx statements (allocations open a scope in the list)."""
        if reads_value_atomic(s):  # T.atomic_add(..., return_prev=True): its read-modify-write goes first
            return [x for st in hoist_value_atomics(s, self.fresh) for x in self.stmts(st)]
        method = getattr(self, "_s_" + type(s).__name__, None)
        if method is None:
            raise LoweringError(f"{type(s).__name__} is not supported by the CPU backend", getattr(s, "span", None))
        mark = self.draw_mark()
        try:
            out = method(s)
        except LoweringError as err:
            if err.span is None:
                err.span = getattr(s, "span", None)
            raise
        return self.draws_before(mark, out if isinstance(out, list) else [out])

    def draw_mark(self) -> int:
        """Where the generator draws of the statement about to be lowered start (cpu/rng.py)."""
        return self.rng.mark() if self.rng is not None else 0

    def draws_before(self, mark: int, stmts: list) -> list:
        """`stmts` preceded by the generator draws their expressions made since `mark`."""
        return self.rng.before(mark, stmts) if self.rng is not None else stmts

    def _s_SeqStmt(self, s):
        return [x for st in s.stmts for x in self.stmts(st)]

    def _s_Launch(self, s):
        phases = grid_phases(s)  # T.sync_grid: one loop over the blocks per phase
        if phases is not None:
            return [self._s_Launch(phase) for phase in phases]
        grid = [self.index(g) for g in s.grid]
        vars_ = [self.loop_var(v.name, g) for v, g in zip(s.block_vars, grid)]
        for iv, tv, ext in zip(s.block_vars, vars_, grid):
            self.vars[iv] = tv
            self.analyzer.bind(tv, self.ir.Range.from_min_extent(0, ext))
        # one loop per named block index of a 1-D grid, else one loop over all blocks (bx fastest, as in TileLang)
        flat = None if len(vars_) == 1 else self.loop_var("block", _product(grid))
        self.blocks = BlockIndex(self.tirx, grid, vars_[0] if flat is None else flat, s.cluster)
        if is_thread_level(s.body):
            self.simt = ThreadEmulation(self, s)
            self.rng = RngLowering(self, s) if uses_rng(s.body) else None
            stmts = (self.rng.allocations() if self.rng else []) + self.simt.block(s.body)
            if self.rng is not None:
                self.rng.finish(s.span)
                self.rng = None
            body = self.tirx.SeqStmt(stmts) if len(stmts) != 1 else stmts[0]
        else:
            body = self._block(s.body)
        kind = self.tirx.ForKind.SERIAL if self.serial_grid else self.tirx.ForKind.PARALLEL
        if flat is None:
            return self.tirx.For(vars_[0], const(0, dtype_of(vars_[0])), grid[0], kind, body)
        binds = [self.tirx.Bind(tv, cast(self.blocks.index(k, last=tv is vars_[-1]), dtype_of(tv)))
                 for k, tv in enumerate(vars_)]  # the named block indices, bound from the flat one
        seq = binds + (list(body.seq) if isinstance(body, self.tirx.SeqStmt) else [body])
        inner = seq[0] if len(seq) == 1 else self.tirx.SeqStmt(seq)  # a T.Kernel without `as` binds no names
        return self.tirx.For(flat, const(0, dtype_of(flat)), _product(grid), kind, inner)

    def _s_For(self, s):
        if s.kind == "parallel" and self.rng is not None and self.tid is not None and draws(s.body):
            return self.rng.parallel(s)  # each thread its CUDA iterations, so its draws land where the GPU's do
        return self.loops(s, 0)

    def loops(self, s: N.For, k: int, body_fn=None, bound=None):
        """The loops of `s` from its k-th var in; `body_fn(body)` lowers the body, `bound(expr)` the bounds."""
        if k == len(s.vars):
            return (body_fn or self._block)(s.body)
        bound = bound or self.expr
        start, extent = index_expr(bound(s.starts[k])), index_expr(bound(s.extents[k]))
        step = as_int(s.step) if s.step is not None else 1
        var = self.loop_var(s.vars[k].name, extent)
        if step is None or step <= 0:
            raise LoweringError("the loop step must be a positive constant on the CPU backend", s.span)
        count = extent if step == 1 else self.tirx.floordiv(extent + const(step - 1, "int32"), const(step, "int32"))
        self.analyzer.bind(var, self.ir.Range.from_min_extent(0, count))
        value = var if step == 1 else var * const(step, "int32")
        if not (isinstance(start, self.tirx.IntImm) and int(start) == 0):
            value = value + start
        self.vars[s.vars[k]] = value
        body = self.loops(s, k + 1, body_fn, bound)
        kind = self.tirx.ForKind.SERIAL
        if s.kind == "unroll" and as_int(s.extents[k]) is not None and as_int(s.extents[k]) <= 64:
            kind = self.tirx.ForKind.UNROLLED
        return self.tirx.For(var, const(0, dtype_of(var)), count, kind, body)

    def _s_Store(self, s):
        if s.buffer in self.packed:
            idx = [self.index(i) for i in s.indices]
            return self.packed[s.buffer].store(idx, self.expr(s.value))
        buf = self.buffer(s.buffer, s.span)
        idx = self.private(s.buffer, self.expr.indices(s.buffer, s.indices), s.span)
        value = self.expr(s.value)
        if buf not in self.fp8_elements:  # fp8: guarded_store stores the value's code
            value = cast(value, str(buf.ty.dtype))
        return self.guarded_store(buf, idx, value, s.buffer.scope == "global")

    def _s_LetStmt(self, s):
        if s.var.dtype == "handle":
            return self._pointer_tensors(s)
        value = self.expr(s.value)
        if draws(s.value) or dtype_of(value) == "bfloat16" or any(
                isinstance(n, N.Load) and n.buffer.scope != "global" for n in walk(s.value)):
            # a let that reads a scratch buffer is kept in a one-element buffer: TVM's storage passes
            # reject a Bind whose value loads an allocation; so is a bfloat16 one (TVM's BF16 legalisation
            # retypes the value to float32 and not the bound variable)
            buf = self.tirx.decl_buffer((1,), dtype_of(value), self.fresh(s.var.name).name, scope=SCRATCH_SCOPE)
            self.vars[s.var] = self.tirx.BufferLoad(buf, [const(0, "int32")])
            return [self.tirx.AllocBuffer(buf), self.tirx.BufferStore(buf, value, [const(0, "int32")])]
        var = self.fresh(s.var.name, dtype_of(value))
        self.vars[s.var] = var
        return self.tirx.Bind(var, value)

    def _pointer_tensors(self, s):
        """Bind a pointer (`T.make_tensor(ptrs[i], shape, dtype)`, an int64 of a T.ptr table) and declare the
        tensors over it."""
        value = self.tirx.reinterpret("handle", self.expr(s.value))
        var = self.tirx.Var(self.fresh(s.var.name).name, value.ty)
        out = [self.tirx.Bind(var, value)]
        tensors = {n.buffer for n in walk(self.func.body) if isinstance(n, (N.Load, N.Store, N.Region))}
        for b in sorted((b for b in tensors if b.data is s.var), key=lambda b: b.name):
            shape = [self.index(d) for d in b.shape] or [const(1, "int32")]
            buf = self.tirx.decl_buffer(shape, self._dtype(b.dtype, b.name, b.span), b.name)
            self.buffers[b] = buf
            out.append(self.tirx.DeclBuffer(buf, data=var))
        return out

    def _s_If(self, s):
        cond = as_bool(self.expr(s.cond))
        then = self._block(s.then_body)
        other = self._block(s.else_body) if s.else_body is not None else None
        return self.tirx.IfThenElse(cond, then, other)

    def _s_While(self, s):
        return self.tirx.While(as_bool(self.expr(s.cond)), self._block(s.body))

    def _s_Evaluate(self, s):
        if isinstance(s.value, N.Call) and s.value.name in HINTS:
            return []
        if isinstance(s.value, N.Call) and s.value.name in ATOMIC_CALLS:  # dst = max/min/or(dst, value)
            old, value = s.value.args
            return self._s_Store(N.Store(old.buffer, old.indices, updated(s.value.name, old, value), span=s.span))
        if isinstance(s.value, N.Call) and s.value.name in VECTOR_ATOMICS:
            return [self._s_Store(store) for store in vector_atomic_stores(s.value)]
        if isinstance(s.value, N.Call) and s.value.name == "rng_init":
            if self.rng is None:
                raise LoweringError("T.rng_init is used outside a T.Kernel block", s.span)
            return self.rng.init(s.value)
        if isinstance(s.value, N.Call) and s.value.name in PRINT_CALLS:
            return device_print(self, s.value)
        if isinstance(s.value, N.Call) and s.value.name == "device_assert":
            return self._device_assert(s.value, s.span)
        if isinstance(s.value, N.Call) and s.value.name == "dp4a":
            return self._s_Store(dp4a_store(s.value))
        if isinstance(s.value, N.Call) and s.value.name == "ptx_mma":
            return mma_sync(self, s.value)
        if isinstance(s.value, N.Call) and s.value.name == "ptx_cp_async":
            return cp_async(self, s.value)
        if isinstance(s.value, N.Call) and s.value.name == "mma_fragment_load":
            return fragment_load(self, s.value)
        return self.tirx.Evaluate(self.expr(s.value))

    def _device_assert(self, call: N.Call, span):
        """T.device_assert(cond): the program stops with an error naming the line when cond is false (a block of
        a parallel grid stops at the failing check)."""
        where = f"T.device_assert failed at line {span.line}" if span is not None else "T.device_assert failed"
        msg = self.ir.StringImm(where)
        return self.tirx.AssertStmt(as_bool(self.expr(call.args[0])), self.ir.StringImm("RuntimeError"), [msg])

    def _s_AnnotateLayout(self, s):
        return []

    def _s_UseSwizzle(self, s):
        return []

    def _s_Copy(self, s):
        return self.ops.copy(s)

    def _s_Gemm(self, s):
        return self.ops.gemm(s)

    def _s_Fill(self, s):
        return self.ops.fill(s)

    def _s_Reduce(self, s):
        return self.ops.reduce(s)

    def _s_CumSum(self, s):
        return self.ops.cumsum(s)

    def _s_AtomicAdd(self, s):
        return self.ops.atomic_add(s)


def lowering_error(func: N.PrimFunc, err: Exception, code: str) -> CompileError:
    """A CPU lowering or build failure as a CompileError at the construct (or the kernel) it names."""
    span = getattr(err, "span", None) or func.name_span or func.span or Span(1, 0, 1, 0)
    diag = Diagnostic(getattr(err, "code", code), Severity.ERROR, str(err), span, kernel=func.name,
                      instance=func.instance or None, target="cpu")
    return CompileError([diag], func.source_path)


def to_tir(func: N.PrimFunc):
    """Lower a tile-IR kernel to a tvm tirx.PrimFunc (raises CompileError on unsupported constructs)."""
    from ...passes.loop_exits import lower_loop_exits

    try:
        return CpuLowering(lower_loop_exits(func)).run()
    except LoweringError as err:
        raise lowering_error(func, err, "lowering-unsupported") from None
    except Exception as err:  # a TVM constructor refusing our IR: report, never crash the caller
        msg = str(err).strip().splitlines()[-1][:300] if str(err).strip() else type(err).__name__
        raise lowering_error(func, RuntimeError(f"the CPU lowering failed: {msg}"), "codegen-error") from None


def _product(extents: list):
    total = extents[0]
    for ext in extents[1:]:
        total = total * ext
    return total
