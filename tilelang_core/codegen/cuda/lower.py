"""Tile IR to thread-level TVMScript for CUDA: launch, shared-memory plan, fragments as registers,
Parallel loops over layouts, barriers, and the multi-buffered cp.async software pipeline.

Tile ops themselves are in `tileops.py`; this module owns statements and the kernel frame.
"""
from __future__ import annotations

import math
import re

from ...ir import nodes as N
from ...ir.arith import as_int, shape_ints
from ...ir.visitor import op_regions, walk
from ...passes.layouts import Generic, Mma, MmaRow, Replicated, View, in_fragment, ravel
from . import smem
from .common import LoweringError, all_of, nbytes, used_buffers, view_root
from .expr import ExprEmitter, ExprError
from .pipeline import PipelineEmitter


class KernelEmitter(PipelineEmitter):
    """Emits one kernel instance as a TVMScript `@T.prim_func` (text)."""

    def __init__(self, func: N.PrimFunc, layouts: dict, pipelines: dict, swizzled: dict, threads: int,
                 wgmma: dict | None = None):
        from .tileops import TileOps

        self.func, self.layouts, self.pipelines, self.swizzled = func, layouts, pipelines, swizzled
        self.threads = threads
        self.lines: list[str] = []
        self.allocs: list[str] = []
        self.depth = 1
        self.names: dict = {}
        self.used_names: set = {"T", "tx", "smem", "main"}
        self.var_text: dict = {}
        self.stage_idx: dict = {}   # shared Buffer -> stage index text while inside a pipeline
        self.stages: dict = {}      # shared Buffer -> number of stages
        self.par = None             # (layout, reg text, loop vars) inside a fragment-driven Parallel loop
        self.dirty_w = self.dirty_r = False
        self.scratch: dict = {}     # name -> (dtype, elems) extra shared buffers
        self.staged: dict = {}      # fragment Buffer -> shared copy read by the current Parallel loop
        self.stage_sites: list = []  # the serial loops (and the Parallel loop) being emitted, outermost first
        self.exprs = ExprEmitter(self.var_text, self.load_text)
        self.ops = TileOps(self)
        self.counter = 0
        self.wgmma = wgmma or {}
        self.in_parallel = 0              # > 0 while emitting a T.Parallel body (no barriers there)
        self.owner = None                 # condition: this thread runs the current iteration's atomics
        self.wgmma_nowait = False         # the next wgmma gemm leaves its group in flight
        self.extra_cuda: list[str] = []   # device functions this kernel needs (wgmma wrappers)
        self.ws = None                    # tma.WarpSpecialization: the TMA producer warpgroup's schedule
        from .threads import ThreadOps

        self.thread_ops = ThreadOps(self)  # thread indices, barriers, T.ws roles
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

    # ------------------------------------------------------------------ names and text
    def name(self, obj, hint: str | None = None) -> str:
        """A unique TVMScript identifier for a Var or Buffer."""
        if obj in self.names:
            return self.names[obj]
        base = re.sub(r"\W", "_", hint or getattr(obj, "name", "v")) or "v"
        if base[0].isdigit():
            base = "v_" + base
        cand, k = base, 1
        while cand in self.used_names:
            cand, k = f"{base}_{k}", k + 1
        self.used_names.add(cand)
        self.names[obj] = cand
        return cand

    def fresh(self, hint: str) -> str:
        """A new unique identifier."""
        self.counter += 1
        return self.name(object(), hint)

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def guarded(self, conds: list[str], text: str) -> None:
        """`text`, under `if` of the conditions when there are any."""
        if conds:
            self.line(f"if {all_of(conds)}:")
            with self.block():
                self.line(text)
        else:
            self.line(text)

    def block(self):
        """Context manager that indents the lines emitted inside it."""
        emitter = self

        class _Indent:
            def __enter__(self):
                emitter.depth += 1

            def __exit__(self, *exc):
                emitter.depth -= 1
        return _Indent()

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
        kind = self.swizzled.get(buf)
        if kind is not None and len(idx) >= 2:
            from .templates import swizzled_index

            idx = swizzled_index(kind, as_int(buf.shape[-1]), nbytes(buf.dtype), idx)
        if buf in self.stages:
            idx = [self.stage_idx.get(buf, "0")] + idx
        return idx

    def load_text(self, buf, idx: list[str], node=None) -> str:
        """Text of buf[idx] for any scope (fragments translated to registers)."""
        if buf in self.staged:
            return f"{self.staged[buf]}[{ravel(idx, shape_ints(buf.shape))}]"
        return f"{self.name(buf)}[{', '.join(self.access(buf, idx, node))}]"

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
        lay = self.layouts.get(buf)
        indices = node.indices if node is not None else ()
        span = getattr(node, "span", None)
        if isinstance(lay, Replicated):
            return ravel([self.idx(i) for i in indices], lay.shape)
        if self.par is None:
            raise LoweringError(f"fragment '{buf.name}' is indexed outside a T.Parallel loop; wrap the access "
                                "in T.Parallel or use T.alloc_local for thread-private values", span)
        layout, reg, loop_vars = self.par
        same = len(indices) == len(loop_vars) and all(i is v for i, v in zip(indices, loop_vars))
        if same and lay == layout:
            return reg
        if isinstance(lay, MmaRow) and lay.fits(layout) and len(indices) == 1 and indices[0] is loop_vars[0]:
            return lay.reg_from_parent(layout, reg)
        message = (f"fragment '{buf.name}' is indexed in a way its inferred layout "
                   f"({lay.describe() if lay else 'none'}) cannot serve inside this T.Parallel loop; "
                   "index it with the loop variables in order")
        if isinstance(node, N.Load):
            raise UnservedFragmentRead(message, span, buf)
        raise LoweringError(message, span, "layout-inference-failed")

    # ------------------------------------------------------------------ barriers
    def shared_rw(self, stmt) -> tuple[bool, bool]:
        """(reads shared, writes shared) for a statement."""

        reads = writes = False
        for node in walk(stmt):
            if isinstance(node, N.Load) and _is_shared(node.buffer):
                reads = True
            elif isinstance(node, N.Store) and _is_shared(node.buffer):
                writes = True
            elif isinstance(node, N.TILE_OPS):
                rs, ws = op_regions(node)
                reads |= any(_is_shared(r.buffer) for r in rs)
                writes |= any(_is_shared(w.buffer) for w in ws)
        return reads, writes

    def sync_before(self, stmt) -> None:
        """Insert __syncthreads() when `stmt` would race with earlier shared-memory accesses.

        Never inside a T.Parallel body: threads diverge there; the loop as a whole was synchronised."""
        if self.in_parallel:
            return
        reads, writes = self.shared_rw(stmt)
        if (reads and self.dirty_w) or (writes and (self.dirty_w or self.dirty_r)):
            self.sync()
        if not self._accounted_inside(stmt):
            self.dirty_r |= reads
            self.dirty_w |= writes

    def _accounted_inside(self, stmt) -> bool:
        """A serial loop or `while` emits its body statement by statement, each accounted (and synchronised) on its
        own: marking the whole body dirty up front would put a barrier before its first statement."""
        if isinstance(stmt, N.For):
            return stmt.kind != "parallel" and not (stmt.kind == "pipelined" and id(stmt) in self.pipelines)
        return isinstance(stmt, N.While)

    @property
    def block_threads(self) -> int:
        """Threads per block: the kernel's, plus the TMA producer warpgroup when warp-specialised."""
        return self.ws.block_threads if self.ws is not None else self.threads

    def sync(self) -> None:
        if self.ws is not None:  # the producer warpgroup never joins: a named barrier over the consumers
            self.line(f'T.cuda.func_call("tl::consumer_sync<{self.threads}>", source_code="")')
        elif self.wgmma:  # make generic-proxy smem writes visible to wgmma (async proxy) before the barrier
            self.line('T.cuda.func_call("tl::fence_sync", source_code="")')
        else:
            self.line('T.tvm_storage_sync("shared")')
        self.dirty_r = self.dirty_w = False

    # ------------------------------------------------------------------ statements
    def stmt(self, s) -> None:
        """Emit one statement (dispatch on its type)."""
        if isinstance(s, N.SeqStmt):
            for x in s.stmts:
                self.stmt(x)
            return
        if isinstance(s, (N.AnnotateLayout, N.UseSwizzle)):
            return
        if isinstance(s, N.Allocate):
            if s.buffer.scope == "shared.barrier":
                return self.thread_ops.alloc_barrier(s)
            if s.init is not None:
                self.line(f"{self.name(s.buffer)}[0] = {self.emit(s.init, s.buffer.dtype)}")
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
            self.line(f"{self.name(s.var)} = {self.emit(s.value)}")
            self.var_text[s.var] = self.name(s.var)
        elif isinstance(s, N.If):
            if not self.thread_ops.if_stmt(s):
                self.if_stmt(s)
        elif isinstance(s, N.While):
            self.while_stmt(s)
        elif isinstance(s, N.Evaluate):
            if isinstance(s.value, N.Call) and s.value.name in ("atomic_max", "atomic_min"):
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
        tensors = [b for b in used_buffers(self.func.body) if b.data is s.var]
        self.line(f'{self.name(s.var)} = T.bind(T.reinterpret("handle", {self.emit(s.value)}))')
        self.var_text[s.var] = self.name(s.var)
        for b in tensors:
            dims = ", ".join(self.idx(d) for d in b.shape) + ("," if len(b.shape) == 1 else "")
            self.line(f'{self.name(b)} = T.decl_buffer(({dims}), "{b.dtype}", data={self.name(s.var)})')

    def store(self, s: N.Store) -> None:
        value = self.emit(s.value, s.buffer.dtype)
        target = self.load_text(s.buffer, [self.idx(i) for i in s.indices], s)
        self.line(f"{target} = {value}")

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
        inner_reads, inner_writes = self.shared_rw(s.body)
        self.line(f"while {self.emit(s.cond, 'bool')}:")
        self.depth += 1
        if (inner_reads or inner_writes) and not self.in_parallel:  # the back edge may race with this iteration
            self.dirty_r = self.dirty_w = True
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
        elif s.kind == "pipelined" and id(s) in self.pipelines:
            self.pipelined(s, self.pipelines[id(s)])
        else:
            self.serial(s)

    def serial(self, s: N.For) -> None:
        if self.in_parallel:
            return self._serial(s)
        self._staged_emit(s, self._serial)

    def _serial(self, s: N.For) -> None:
        kind = "T.unroll" if s.kind == "unroll" else "T.serial"
        inner_reads, inner_writes = self.shared_rw(s.body)
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
        if inner_reads and inner_writes and not self.in_parallel:  # the back edge may race with this iteration
            self.dirty_r = self.dirty_w = True  # (a loop that only reads, or only writes, shared memory cannot)
        self.body(s.body)
        self.depth -= len(s.vars)

    # ------------------------------------------------------------------ Parallel loops
    def parallel(self, s: N.For) -> None:
        """A T.Parallel loop; a fragment it reads at elements other threads hold is read from a shared copy."""
        if self.in_parallel:
            return self._parallel(s)
        self._staged_emit(s, self._parallel)

    def _staged_emit(self, s: N.For, emit) -> None:
        """`emit(s)`; when a T.Parallel loop inside reads fragment elements other threads hold, emit again with a
        shared copy of that fragment staged before the outermost loop of serial loops around it that never
        writes the fragment (once, not every iteration), or else before the Parallel loop itself."""
        state = (len(self.lines), len(self.allocs), dict(self.scratch), self.depth, self.par, self.owner,
                 self.in_parallel, self.dirty_r, self.dirty_w)
        staged = []
        self.stage_sites.append(s)
        try:
            while True:
                try:
                    return emit(s)
                except UnservedFragmentRead as exc:
                    buf = exc.buffer
                    if buf in self.staged or _stage_site(self.stage_sites, buf) is not s:
                        raise
                    del self.lines[state[0]:], self.allocs[state[1]:]
                    self.scratch = dict(state[2])
                    self.depth, self.par, self.owner, self.in_parallel, self.dirty_r, self.dirty_w = state[3:]
                    for b in staged:
                        self._stage_fragment(b)
                    staged.append(buf)
                    self._stage_fragment(buf)
                    state = (len(self.lines), len(self.allocs), dict(self.scratch), *state[3:])
        finally:
            self.stage_sites.pop()
            for b in staged:
                self.staged.pop(b, None)

    def _stage_fragment(self, buf) -> None:
        """Write every element of fragment `buf` to a shared scratch copy that any thread can read."""
        lay, shape = self.layouts[buf], list(shape_ints(buf.shape))
        stage = self.fresh(f"{buf.name}_shared")
        self.scratch[stage] = (buf.dtype, math.prod(shape))
        self.sync()  # an earlier run of this loop (inside a serial loop) may still be reading the copy
        r = self.fresh("r")
        self.line(f"for {r} in {'T.unroll' if lay.regs <= 256 else 'T.serial'}({lay.regs}):")
        with self.block():
            self.guarded(in_fragment(lay, "tx", r), f"{stage}[{ravel(lay.coords('tx', r), shape)}] = {self.name(buf)}[{r}]")
        self.sync()
        self.staged[buf] = stage

    def _parallel(self, s: N.For) -> None:
        from ...passes.layouts import fragment_accesses

        accesses = list(fragment_accesses(s.body))
        full = [b for b, idx in accesses if len(idx) == len(s.vars) and all(i is v for i, v in zip(idx, s.vars))]
        driver = next((self.layouts[b] for b in full if not isinstance(self.layouts.get(b), Replicated)), None)
        if driver is None:
            s, driver = self._rebased(s, accesses)
        self.in_parallel += 1
        try:
            if driver is not None:
                return self._parallel_layout(s, driver)
            rows = self._row_layout(s, accesses)
            if rows is not None:
                return self._parallel_rows(s, rows)
            if accesses:
                return self._parallel_replicated(s)
            return self._parallel_distributed(s)
        finally:
            self.in_parallel -= 1

    def _parallel_layout(self, s: N.For, lay) -> None:
        for v, st in zip(s.vars, s.starts):
            if as_int(st) != 0:
                raise LoweringError("a T.Parallel loop over a fragment must start at 0", s.span)
        extents = [as_int(e) for e in s.extents]
        shape = list(lay.shape) if isinstance(lay, (Generic, Replicated, Mma, View)) else [lay.m]
        short = len(extents) == len(shape) and all(e is not None and e <= d for e, d in zip(extents, shape))
        if extents != shape and not short:
            raise LoweringError(f"T.Parallel extents {extents} do not match the fragment shape {shape}", s.span,
                                "layout-inference-failed")
        r = self.fresh("r")
        kind = "T.unroll" if lay.regs <= 256 else "T.serial"
        self.line(f"for {r} in {kind}({lay.regs}):")
        with self.block():
            coords = lay.coords("tx", r)
            for v, c in zip(s.vars, coords):
                self.var_text[v] = c
            old, old_owner = self.par, self.owner
            self.par = (lay, r, s.vars)
            if isinstance(lay, (Mma, MmaRow, View)) and lay.one_copy("tx"):  # rows copied over lanes / warps
                self.owner = lay.one_copy("tx")
            conds = in_fragment(lay, "tx", r)
            conds += [f"{c} < {e}" for c, e, d in zip(coords, extents, shape) if e < d]  # a loop shorter than the tile
            if conds:
                self.line(f"if {' and '.join(conds)}:")
                with self.block():
                    self.body(s.body)
            else:
                self.body(s.body)
            self.par, self.owner = old, old_owner

    def _parallel_replicated(self, s: N.For) -> None:
        """Every thread runs every iteration (the loop only touches replicated fragments); an atomic in
        it runs once per iteration, on the thread the flat iteration index maps to."""
        flat = "0"
        for v, st, ext in zip(s.vars, s.starts, s.extents):
            flat = f"({flat} * {self.idx(ext)} + {self.name(v)} - {self.idx(st)})"
        old, self.owner = self.owner, f"T.floormod({flat}, {self.threads}) == tx"
        try:
            self.serial(N.For(s.vars, s.starts, s.extents, "serial", s.body, span=s.span))
        finally:
            self.owner = old

    def _rebased(self, s: N.For, accesses: list):
        """(loop, driver layout) for a loop indexing a fragment at constant offsets of its variables
        (`acc[i + 16, j]`), re-based on the fragment (passes.loop_shift); (s, None) otherwise."""
        from ...passes.loop_shift import index_shifts, rebase_on_fragment

        for b, idx in accesses:
            lay, shifts, shape = self.layouts.get(b), index_shifts(idx, s.vars), shape_ints(b.shape)
            if shifts is not None and not isinstance(lay, Replicated) and shape and len(shape) == len(s.vars):
                same = {c for c, _ in accesses if self.layouts.get(c) == lay}
                return rebase_on_fragment(s, same, shifts, list(shape)), lay
        return s, None

    def _row_layout(self, s: N.For, accesses: list):
        """The MmaRow layout of a Parallel loop whose fragment accesses are all row vectors indexed by its
        first variable (`S[h, k] = S[h, k] - m[h]` with m a reduction of a gemm tile), else None."""
        lays = {self.layouts.get(b) for b, _ in accesses}
        lay = next(iter(lays)) if len(lays) == 1 else None
        if len(s.vars) < 2 or not isinstance(lay, MmaRow) or as_int(s.starts[0]) != 0 or as_int(
                s.extents[0]) != lay.m:
            return None
        return lay if all(len(idx) == 1 and idx[0] is s.vars[0] for _, idx in accesses) else None

    def _parallel_rows(self, s: N.For, lay) -> None:
        """The rows a thread holds drive the first variable; the other iterations of a row are split over the
        threads holding that row (4 lanes of a quad per warp column), so every iteration runs once."""
        nrep, rep = 4 * lay.wn, f"(tx % 4 + 4 * (tx // 32 % {lay.wn}))"
        r = self.fresh("r")
        self.line(f"for {r} in T.unroll({lay.regs}):")
        with self.block():
            self.var_text[s.vars[0]] = lay.coords("tx", r)[0]
            old, old_owner = self.par, self.owner
            self.par, self.owner = (lay, r, s.vars[:1]), None
            self._split_iterations(N.For(s.vars[1:], s.starts[1:], s.extents[1:], "parallel", s.body, span=s.span),
                                   rep, nrep)
            self.par, self.owner = old, old_owner

    def _parallel_distributed(self, s: N.For) -> None:
        """Iterations spread over the block's threads (no fragments inside)."""
        self._split_iterations(s, "tx", self.threads)

    def _split_iterations(self, s: N.For, worker: str, workers: int) -> None:
        """Iteration `it * workers + worker` of the flattened loop nest runs on `worker`."""
        exts = [self.idx(e) for e in s.extents]
        total = " * ".join(f"({e})" for e in exts)
        it = self.fresh("it")
        e = f"({it} * {workers} + {worker})"
        self.line(f"for {it} in T.serial(T.floordiv({total} + {workers - 1}, {workers})):")
        with self.block():
            self.line(f"if {e} < {total}:")
            with self.block():
                stride = "1"
                coords = []
                for ext in reversed(exts):
                    coords.append(f"T.floormod(T.floordiv({e}, {stride}), {ext})" if stride != "1"
                                  else f"T.floormod({e}, {ext})")
                    stride = f"({stride} * {ext})" if stride != "1" else f"({ext})"
                coords.reverse()
                for v, st, c in zip(s.vars, s.starts, coords):
                    st_t = self.idx(st)
                    self.var_text[v] = c if st_t == "0" else f"({st_t} + {c})"
                self.body(s.body)

    # ------------------------------------------------------------------ kernel frame
    def allocate(self) -> None:
        """Declare fragments, locals and vars (shared memory views are added by `frame`)."""
        for node in walk(self.func.body):
            if not isinstance(node, N.Allocate):
                continue
            b = node.buffer
            if b.scope == "local.fragment":
                lay = self.layouts[b]
                self.allocs.append(f'{self.name(b)} = T.alloc_buffer(({lay.regs},), "{b.dtype}", scope="local")')
            elif b.scope in ("local", "local.var"):
                shape = shape_ints(b.shape) or (1,)
                if b.scope == "local" and shape_ints(b.shape) is None:
                    raise LoweringError(f"local buffer '{b.name}' needs a static shape", node.span)
                dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
                self.allocs.append(f'{self.name(b)} = T.alloc_buffer(({dims}), "{b.dtype}", scope="local")')
            elif _is_shared(b):
                self.name(b)
        for v in self.views():
            root = view_root(v)
            if root.scope == "local.fragment":  # the same registers (layouts.View maps them to the view's shape)
                self.names[v] = self.name(root)
            if root.scope == "global":
                dims = ", ".join(self.idx(d) for d in v.shape) + ("," if len(v.shape) == 1 else "")
                self.allocs.append(f'{self.name(v)} = T.decl_buffer(({dims}), "{v.dtype}", '
                                   f'data={self.name(root)}.data)')

    def views(self) -> list:
        """The buffer views the kernel uses (T.reshape, T.view, T.Tensor(shape, dtype, A.data)), in order."""
        return list(dict.fromkeys(b for b in used_buffers(self.func.body) if b.base is not None))

    def shared_views(self, offsets: dict, sizes: dict) -> list[str]:
        """decl_buffer lines of views of shared tiles: the tile's bytes read as another shape or dtype."""
        lines = []
        for v in self.views():
            root = view_root(v)
            if not _is_shared(root):
                continue
            shape = shape_ints(v.shape)
            problem = ("needs a static shape" if shape is None else
                       "views a multi-buffered tile" if root in self.stages or v in self.stages else
                       # another dtype reuses the bytes as scratch; the same dtype would read swizzled elements
                       "views a swizzled gemm tile with its own dtype" if (self.swizzled.get(root) or
                                                                          self.swizzled.get(v)) and
                       v.dtype == root.dtype else None)
            size = nbytes(v.dtype)
            for d in shape or ():
                size *= d
            if problem is None and size > sizes[root]:
                problem = f"is larger ({size} bytes) than the tile it views ({sizes[root]} bytes)"
            if problem is not None:
                raise LoweringError(f"shared view '{v.name}' of '{root.name}' {problem}; the CUDA lowering does "
                                    "not support that yet", v.span)
            dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
            lines.append(f'{self.name(v)} = T.decl_buffer(({dims}), "{v.dtype}", data=smem.data, '
                         f'elem_offset={offsets[root] // nbytes(v.dtype)}, scope="shared.dyn")')
        return lines

    def shared_buffers(self) -> list:
        return [n.buffer for n in walk(self.func.body) if isinstance(n, N.Allocate) and _is_shared(n.buffer)]

    def smem_plan(self, limit: int | None = None) -> tuple[list[str], int, list]:
        """Views into one dynamic shared-memory pool; returns (lines, total bytes, breakdown).

        Buffers go one after another; when that exceeds `limit` bytes, buffers never live together share bytes."""
        entries = []
        for b in self.shared_buffers():
            shape = shape_ints(b.shape)
            if shape is None:
                raise LoweringError(f"shared buffer '{b.name}' needs a static shape", b.span)
            stages = self.stages.get(b, 1)
            if self.swizzled.get(b) == "atoms":
                shape = shape[:-2] + (shape[-1] // 64, shape[-2], 64)
            entries.append((self.name(b), b.dtype, ((stages,) if b in self.stages else ()) + shape, stages, b))
        for name, (dtype, elems) in self.scratch.items():
            entries.append((name, dtype, (elems,), 1, name))
        sizes = []
        for _, dtype, shape, _, _ in entries:
            size = nbytes(dtype)
            for d in shape:
                size *= d
            sizes.append(size)
        align = 1024 if self.wgmma else 128  # wgmma's 128-byte swizzle repeats every 1024 bytes
        at = smem.sequential(sizes, align)
        if limit is not None and entries and at[-1] + sizes[-1] > limit:
            at = smem.packed(sizes, smem.live_ranges(self.func, [e[4] for e in entries]), align)
        lines, breakdown, offsets, by_label = [], [], {}, {}
        for (name, dtype, shape, stages, label), size, offset in zip(entries, sizes, at):
            dims = ", ".join(map(str, shape)) + ("," if len(shape) == 1 else "")
            lines.append(f'{name} = T.decl_buffer(({dims}), "{dtype}", data=smem.data, '
                         f'elem_offset={offset // nbytes(dtype)}, scope="shared.dyn")')
            breakdown.append((getattr(label, "name", label), size // stages, stages))
            offsets[label], by_label[label] = offset, size
        total = max((o + s for o, s in zip(at, sizes)), default=0)
        return lines + self.shared_views(offsets, by_label), total, breakdown


class UnservedFragmentRead(LoweringError):
    """A Parallel loop reads a fragment element that the thread running the iteration does not hold."""

    def __init__(self, message: str, span, buffer):
        super().__init__(message, span, "layout-inference-failed")
        self.buffer = buffer


def _stage_site(sites: list, buf):
    """The loop to stage `buf` before: from the innermost site (a T.Parallel loop) outwards through serial loops
    that hold the next one directly and never write `buf`; None when the Parallel loop itself writes it."""
    inner = sites[-1]
    if _writes(inner, buf):
        return None
    for outer in reversed(sites[:-1]):
        if outer.kind not in ("serial", "unroll") or _writes(outer, buf) or not any(
                st is inner for st in _flat_seq(outer.body)):
            break
        inner = outer
    return inner


def _flat_seq(s) -> list:
    return [x for st in s.stmts for x in _flat_seq(st)] if isinstance(s, N.SeqStmt) else [s]


def _writes(s: N.For, buf) -> bool:
    """True when the loop `s` stores to `buf` or a tile op in it writes `buf`."""
    for node in walk(s.body):
        if isinstance(node, N.Store) and node.buffer is buf:
            return True
        if isinstance(node, N.TILE_OPS) and any(w.buffer is buf for w in op_regions(node)[1]):
            return True
    return False


def _is_shared(buf) -> bool:
    return buf.scope in ("shared.dyn", "shared")
