"""Tile IR to thread-level TVMScript for CUDA: buffer access, fragments as registers, barriers, thread-role buffers
and statements. Names and indented lines are in `text.py`, T.Parallel loops in `parallel.py`, the kernel frame and
shared-memory plan in `frame.py`, the cp.async pipeline in `pipeline.py`, tile ops in `tileops.py`, the state they
share in `records.py`.
"""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import replace
from typing import Callable

from ...ir import nodes as N
from ...ir.arith import as_int, shape_ints
from ...options import current_options
from ...ir.safe_values import CALL as SAFE_VALUE_CALL
from ...ir.safe_values import safe_values
from ...language.packing import per_byte
from ...passes.layout_kinds import Generic, MmaRow, Replicated, ravel
from ...passes.layouts import unit_dims_dropped
from .common import LoweringError, all_of, nbytes, reducer_buffers, shared_rw, used_buffers
from .expr import ExprEmitter, ExprError, is_wide, zero_text
from .frame import FrameEmitter
from .parallel import ParallelEmitter, UnservedFragmentRead
from . import vectorize
from .pipeline import PipelineEmitter
from .text import TextEmitter
from .records import (BarrierState, DeviceLibrary, FrameDeclarations, KernelPlanView, ParallelScope, PipelineState,
                      RoleState, SharedMemoryPlan)


class KernelEmitter(PipelineEmitter, ParallelEmitter, FrameEmitter, TextEmitter):
    """Emits one kernel instance as a TVMScript `@T.prim_func` (text)."""

    def __init__(self, func: N.PrimFunc, layouts: dict, pipelines: dict, swizzled: dict, threads: int,
                 wgmma: dict | None = None, ws=None):
        from .tileops import TileOps

        self.plan = KernelPlanView(func, layouts, pipelines, swizzled, wgmma or {})
        self.threads = threads
        self.lines: list[str] = []
        self.frame = FrameDeclarations()
        self.parallel_scope = ParallelScope()
        self.depth = 1
        self.names: dict = {}
        self.used_names: set = {"T", "tx", "smem", "main"}
        self.var_text: dict = {}
        self.pipeline = PipelineState()
        self.barrier_state = BarrierState()
        self.exprs = ExprEmitter(self.var_text, self.load_text)
        self.ops = TileOps(self)
        self.counter = 0
        self.reducers = reducer_buffers(func)  # T.alloc_reducer buffers: per-thread partials, combined by finalize
        self.safe_values = safe_values(func.body)  # tensor -> what its reads outside give (T.annotate_safe_value)
        self.device_library = DeviceLibrary()  # device functions this kernel needs (wgmma wrappers, mbarriers, ...)
        self.roles = RoleState(ws)  # ws: tma.WarpSpecialization, the TMA producer warpgroup's schedule
        self._role_sync: Callable[[], None] | None = None  # the named barrier of the thread role being emitted
        self._marks = False  # each statement starts with a mark of its source line (marked_body)
        self.shared_memory: SharedMemoryPlan | None = None  # the shared-memory pool, planned after the body (frame.py)
        from .threads import ThreadOps

        self.thread_ops = ThreadOps(self)  # thread indices, barriers, T.ws roles
        if self.thread_ops.orders_stages:  # the roles' barriers order the stages; loops run as written
            self.plan = replace(self.plan, pipelines={})
        self.exprs.intrinsics.append(self.thread_ops.expr)
        from .intrin import IntrinsicOps

        self.intrinsic_ops = IntrinsicOps(self)  # ieee_* rounding, vector atomics, finalize_reducer
        self.exprs.intrinsics.append(self.intrinsic_ops.expr)
        from .extern import ExternOps

        self.extern_ops = ExternOps(self)  # T.import_source, T.call_extern, T.access_ptr
        self.exprs.intrinsics.append(self.extern_ops.expr)
        from .rng import RngOps

        self.rng_ops = RngOps(self)  # T.rng_init, T.rng_rand, T.rng_rand_float (Philox4x32-10)
        self.exprs.intrinsics.append(self.rng_ops.expr)

    # ------------------------------------------------------------------ thread roles and line marks
    @contextmanager
    def role_body(self, threads: int, sync: Callable[[], None], finish: Callable[[list[str]], list[str]]):
        """Emit a thread role's body into a buffer of its own: tile ops laid out for the role's `threads`, one level
        deeper, no divergence around it, each block barrier made by `sync` (the role's named barrier); on leaving,
        `finish(lines)` joins the enclosing buffer."""
        scope = self.parallel_scope
        saved = self.lines, self.threads, self.depth, scope.in_parallel, self._role_sync
        self.lines, self.threads, self.depth, scope.in_parallel, self._role_sync = [], threads, self.depth + 1, 0, sync
        try:
            yield
        finally:
            lines = self.lines
            self.lines, self.threads, self.depth, scope.in_parallel, self._role_sync = saved
        self.lines += finish(lines)

    def marked_body(self, body) -> None:
        """Emit the kernel body, each statement after a mark of its source line (tvm_source.py makes them comments
        and the line map); statements emitted after it are marked too."""
        self._marks = True
        self.stmt(body)
        if not self.lines:
            self.line("T.evaluate(0)")

    def emit(self, e, dtype=None) -> str:
        try:
            return self.exprs.emit(e, dtype)
        except ExprError as exc:
            raise LoweringError(str(exc), exc.span or getattr(e, "span", None)) from None

    def idx(self, e) -> str:
        return self.emit(e, "int32")

    # ------------------------------------------------------------------ buffer access
    def shared_index(self, buf, idx: list[str]) -> list[str]:
        """Physical index of a shared buffer element: stage prefix and swizzle (see plan.shared_layouts)."""
        kind = self.plan.swizzled.get(buf)
        if kind is not None and len(idx) >= 2:
            from .templates import swizzled_index

            idx = swizzled_index(kind, as_int(buf.shape[-1]), nbytes(buf.dtype), idx)
        if buf in self.pipeline.stages:
            idx = [self.pipeline.stage_idx.get(buf, "0")] + idx
        return idx

    def load_text(self, buf, idx: list[str], node=None) -> str:
        """Text of buf[idx] for any scope (fragments translated to registers); a kernel's own element read of a
        global tensor reads 0 outside the tensor, as TileLang's LegalizeSafeMemoryAccess makes it."""
        if buf in self.parallel_scope.staged:
            return f"{self.parallel_scope.staged[buf]}[{ravel(idx, shape_ints(buf.shape))}]"
        text = f"{self.name(buf)}[{', '.join(self.access(buf, idx, node))}]"
        bounds = self.global_bounds(buf, idx) if isinstance(node, N.Load) else []
        if bounds:
            return f"T.if_then_else({all_of(bounds)}, {text}, {self.safe_text(buf, buf.dtype)})"
        return text

    def safe_text(self, buf, dtype: str) -> str:
        """What a read outside global tensor `buf` gives, as `dtype`: its T.annotate_safe_value, else 0."""
        value = self.safe_values.get(buf)
        return zero_text(dtype) if value is None else self.emit(value, dtype)

    def global_bounds(self, buf, idx: list[str]) -> list[str]:
        """`0 <= i < extent` for each index of a global tensor access; TVM's simplifier drops what it can prove.
        None with tl.disable_safe_memory_legalize (the options' safe_memory off) or for other scopes."""
        if buf.scope != "global" or not current_options().safe_memory:
            return []
        extent = (lambda d: self.emit(d, "int64")) if is_wide(buf) else self.idx  # noqa: E731
        return [f"T.And(0 <= {i}, {i} < {extent(d)})" for i, d in zip(idx, buf.shape)]

    def access(self, buf, idx: list[str], node=None) -> list[str]:
        if buf.scope in ("shared.dyn", "shared"):
            return self.shared_index(buf, idx)
        if buf.scope == "local.fragment":
            return [self.fragment_reg(buf, node)]
        if buf.scope == "local.var":
            return ["0"]
        return idx

    def fragment_reg(self, buf, node) -> str:
        """Register index of a fragment element accessed inside a Parallel loop."""
        lay = self.plan.layouts.get(buf)
        indices = node.indices if node is not None else ()
        span = getattr(node, "span", None)
        if isinstance(lay, Replicated):
            return ravel([self.idx(i) for i in indices], lay.shape)
        if self.parallel_scope.par is None:
            raise LoweringError(f"fragment '{buf.name}' is indexed outside a T.Parallel loop; wrap the access "
                                "in T.Parallel or use T.alloc_local for thread-private values", span)
        layout, reg, loop_vars = self.parallel_scope.par
        same = len(indices) == len(loop_vars) and all(i is v for i, v in zip(indices, loop_vars))
        if same and lay == layout:
            return reg
        if isinstance(lay, MmaRow) and lay.fits(layout) and len(indices) == 1 and indices[0] is loop_vars[0]:
            return lay.reg_from_parent(layout, reg)
        if _same_elements_without_unit_dims(lay, layout, indices, loop_vars, shape_ints(buf.shape)):
            return reg
        message = (f"fragment '{buf.name}' is indexed in a way its inferred layout "
                   f"({lay.describe() if lay else 'none'}) cannot serve inside this T.Parallel loop; "
                   "index it with the loop variables in order")
        if isinstance(node, N.Load):
            raise UnservedFragmentRead(message, span, buf)
        raise LoweringError(message, span, "layout-inference-failed")

    # ------------------------------------------------------------------ barriers
    def sync_before(self, stmt) -> None:
        """Insert __syncthreads() when `stmt` would race with earlier shared-memory accesses.

        Never inside a T.Parallel body: threads diverge there; the loop as a whole was synchronised."""
        if self.parallel_scope.in_parallel:
            return
        reads, writes = shared_rw(stmt)
        state = self.barrier_state
        if (reads and state.dirty_w) or (writes and (state.dirty_w or state.dirty_r)):
            self.sync()
        if not self._accounted_inside(stmt):
            state.touched(reads, writes)

    def _accounted_inside(self, stmt) -> bool:
        """A serial loop or `while` emits its body statement by statement, each accounted (and synchronised) on its
        own: marking the whole body dirty up front would put a barrier before its first statement."""
        if isinstance(stmt, N.For):
            return stmt.kind != "parallel" and not (stmt.kind == "pipelined" and id(stmt) in self.plan.pipelines)
        return isinstance(stmt, N.While)

    @property
    def block_threads(self) -> int:
        """Threads per block: the kernel's, plus the TMA producer warpgroup when warp-specialised."""
        return self.roles.ws.block_threads if self.roles.ws is not None else self.threads

    def sync(self) -> None:
        """A barrier of the block (of the thread role being emitted, inside one); nothing is left dirty after it."""
        if self._role_sync is not None:
            return self._role_sync()
        if self.roles.ws is not None:  # the producer warpgroup never joins: a named barrier over the consumers
            self.line(f'T.cuda.func_call("tl::consumer_sync<{self.threads}>", source_code="")')
        elif self.plan.wgmma:  # make generic-proxy smem writes visible to wgmma (async proxy) before the barrier
            self.line('T.cuda.func_call("tl::fence_sync", source_code="")')
        else:
            self.line('T.tvm_storage_sync("shared")')
        self.barrier_state.synced()

    # ------------------------------------------------------------------ statements
    def stmt(self, s) -> None:
        """Emit one statement (dispatch on its type)."""
        span = getattr(s, "span", None) if self._marks else None
        if span is not None and not isinstance(s, (N.SeqStmt, N.Allocate)) and self.parallel_scope.par is None:
            self.line(f'T.cuda.func_call("tl_line_{span.line}", source_code="")')
        if isinstance(s, N.SeqStmt):
            for x in s.stmts:
                self.stmt(x)
            return
        if isinstance(s, (N.AnnotateLayout, N.UseSwizzle)):
            return
        if isinstance(s, N.Allocate):
            if s.buffer.scope == "shared.barrier":
                return self.thread_ops.alloc_barrier(s)
            if s.init is not None or s.buffer.scope == "local.var":  # a T.alloc_var without init= starts at 0
                init = s.init if s.init is not None else N.Const(0, s.buffer.dtype)
                self.line(f"{self.name(s.buffer)}[0] = {self.emit(init, s.buffer.dtype)}")
            return
        if not (isinstance(s, N.If) and self.thread_ops.is_role(s)):  # roles place their own barriers
            self.sync_before(s)
        if isinstance(s, N.For):
            self.loop(s)
        elif isinstance(s, N.Store):
            self.store(s)
        elif isinstance(s, N.LetStmt) and s.var.dtype == "handle":
            self.pointer_tensors(s)
        elif isinstance(s, N.LetStmt):
            value = self.emit(s.value)  # a plain name = value is substituted at each use; a draw must happen once
            self.line(f"{self.name(s.var)} = {f'T.bind({value})' if self.rng_ops.draws(s.value) else value}")
            self.var_text[s.var] = self.name(s.var)
        elif isinstance(s, N.If):
            if not self.thread_ops.if_stmt(s):
                self.if_stmt(s)
        elif isinstance(s, N.While):
            self.while_stmt(s)
        elif isinstance(s, N.Evaluate):
            if isinstance(s.value, N.Call) and s.value.name in (SAFE_VALUE_CALL, "assume", "annotate_l2_hit_ratio"):
                return  # hints: the safe values are read once, in __init__; an assumption runs nothing; the L2
                # hit ratios are the launch's (generate.l2_persisting)
            if isinstance(s.value, N.Call) and s.value.name in ("atomic_max", "atomic_min", "atomic_or"):
                self.ops.atomic_minmax(s.value)
            elif not (self.thread_ops.statement(s) or self.intrinsic_ops.statement(s) or self.extern_ops.statement(s)
                    or self.rng_ops.statement(s)):
                self.line(f"T.evaluate({self.emit(s.value)})")
        elif isinstance(s, N.TILE_OPS):
            self.ops.emit(s)
        elif isinstance(s, N.Launch):
            raise LoweringError("a nested T.Kernel is not supported; use one T.Kernel per kernel", s.span)
        else:
            raise LoweringError(f"{type(s).__name__} is not supported by the CUDA lowering", getattr(s, "span", None))

    def pointer_tensors(self, s: N.LetStmt) -> None:
        """Bind a pointer (`T.make_tensor(ptrs[i], shape, dtype)`) and declare the tensors over it."""
        tensors = [b for b in used_buffers(self.plan.func.body) if b.data is s.var]
        self.line(f'{self.name(s.var)} = T.bind(T.reinterpret("handle", {self.emit(s.value)}))')
        self.var_text[s.var] = self.name(s.var)
        for b in tensors:
            dims = ", ".join(self.idx(d) for d in b.shape) + ("," if len(b.shape) == 1 else "")
            self.line(f'{self.name(b)} = T.decl_buffer(({dims}), "{b.dtype}", data={self.name(s.var)})')

    def store(self, s: N.Store) -> None:
        value = self.emit(s.value, s.buffer.dtype)
        idx = [self.exprs.index_of(s.buffer, i) for i in s.indices]
        if per_byte(s.buffer.dtype) == 2:  # one fp4 element: its half of the byte, the other half kept
            flat = idx[0] if idx else "0"
            for i, d in zip(idx[1:], s.buffer.shape[1:]):
                flat = f"({flat} * {self.idx(d)} + {i})"
            base = f"{self.name(s.buffer)}.ptr_to([{', '.join('0' for _ in idx) or '0'}])"
            call = f'T.cuda.func_call("tl::store_fp4", {base}, {flat}, T.reinterpret("uint8", {value}), source_code="")'
            return self.guarded(self.global_bounds(s.buffer, idx), call)
        target = self.load_text(s.buffer, idx, s)
        if s.buffer.scope == "global" and idx:  # a store outside the tensor is skipped (LegalizeSafeMemoryAccess)
            return self.guarded(self.global_bounds(s.buffer, idx), f"{target} = {value}")
        if s.buffer in self.reducers and self.parallel_scope.in_parallel:  # a partial: each iteration contributes once
            owner = self.parallel_scope.owner
            return self.guarded([owner] if owner else [], f"{target} = {value}")
        self.line(f"{target} = {value}")
        if self.parallel_scope.par is not None and s.buffer.scope == "local.fragment" and isinstance(
                self.plan.layouts.get(s.buffer), Replicated) and s.buffer not in self.parallel_scope.staged:
            self.publish(s.buffer, target, idx)  # only this thread wrote it; every thread holds it whole

    def if_stmt(self, s: N.If) -> None:
        self.line(f"if {self.emit(s.cond, 'bool')}:")
        with self.block():
            self.body(s.then_body)
        if s.else_body is not None:
            self.line("else:")
            with self.block():
                self.body(s.else_body)

    def while_stmt(self, s: N.While) -> None:
        """A runtime `while` (break/continue were already lowered to flags by passes.loop_exits)."""
        inner_reads, inner_writes = shared_rw(s.body)
        self.line(f"while {self.emit(s.cond, 'bool')}:")
        self.depth += 1
        if (inner_reads or inner_writes) and not self.parallel_scope.in_parallel:  # the back edge may race
            self.barrier_state.touched()
        self.body(s.body)
        self.depth -= 1

    def body(self, s) -> None:
        """Emit a nested body (never empty: TVMScript needs a statement)."""
        n = len(self.lines)
        self.stmt(s)
        if len(self.lines) == n:
            self.line("T.evaluate(0)")

    def loop(self, s: N.For) -> None:
        if s.kind == "parallel":
            self.parallel(s)
        elif s.kind == "pipelined" and id(s) in self.plan.pipelines:
            self.pipelined(s, self.plan.pipelines[id(s)])
        else:
            self.serial(s)

    def serial(self, s: N.For) -> None:
        if self.parallel_scope.in_parallel:
            return self._serial(s)
        self.staged_emit(s, self._serial)

    def _vectorized(self, s: N.For, lanes: int) -> None:
        """A T.vectorized loop of element moves as TVM vector loops of `lanes` elements (16 bytes at most each)."""
        v, it = s.vars[0], self.name(s.vars[0])
        start, ext = self.idx(s.starts[0]), as_int(s.extents[0])
        if ext == lanes:
            self.line(f"for {it} in T.vectorized({lanes}):")
            self.var_text[v] = it if start == "0" else f"({start} + {it})"
            self.depth += 1
        else:
            self.line(f"for {it}_o in T.serial({ext // lanes}):")
            self.line(f"    for {it} in T.vectorized({lanes}):")
            self.var_text[v] = f"({start} + {it}_o * {lanes} + {it})"
            self.depth += 2
        self.body(s.body)
        self.depth -= 1 if ext == lanes else 2

    def _serial(self, s: N.For) -> None:
        lanes = vectorize.lanes(s) if s.kind == "vectorized" else 0
        if lanes:
            return self._vectorized(s, lanes)
        kind = "T.unroll" if s.kind == "unroll" else "T.serial"
        inner_reads, inner_writes = shared_rw(s.body)
        for k, (v, start, ext) in enumerate(zip(s.vars, s.starts, s.extents)):
            it = self.name(v)
            if s.step is not None and len(s.vars) == 1:
                step = self.idx(s.step)
                self.line(f"for {it}_i in {kind}(T.floordiv({self.idx(ext)} + {step} - 1, {step})):")
                self.var_text[v] = f"({self.idx(start)} + {it}_i * {step})"
            else:
                st = self.idx(start)
                self.line(f"for {it} in {kind}({st}, {st} + {self.idx(ext)}):" if st != "0"
                          else f"for {it} in {kind}({self.idx(ext)}):")
                self.var_text[v] = it
            self.depth += 1
        if inner_reads and inner_writes and not self.parallel_scope.in_parallel:  # the back edge may race
            # (a loop that only reads, or only writes, shared memory cannot)
            self.barrier_state.touched()
        self.body(s.body)
        self.depth -= len(s.vars)


def _same_elements_without_unit_dims(lay, driver, indices, loop_vars, shape) -> bool:
    """True when `buf[j]` in a Parallel loop over (1, D) driven by a generic (1, D) layout is the driver's own
    element: both layouts spread elements by their row-major index over the same threads, and leaving out the
    dims of extent 1 (the loop var of each) leaves the same shape and index."""
    if not (isinstance(lay, Generic) and isinstance(driver, Generic)) or (lay.threads, lay.vec) != (
            driver.threads, driver.vec):
        return False
    return (list(shape or ()) == [d for d in driver.shape if d != 1]
            and unit_dims_dropped(indices, loop_vars, driver.shape))
