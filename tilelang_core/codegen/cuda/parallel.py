"""CUDA lowering of T.Parallel loops: over a fragment's layout, replicated, row-wise or split over the threads;
fragment elements another thread holds are read from a staged shared copy. Mixed into KernelEmitter."""
from __future__ import annotations

import math

from ...ir import nodes as N
from ...ir.arith import as_int, shape_ints
from ...ir.visitor import flat_stmts, op_regions, walk
from ...passes.layout_kinds import Generic, Mma, MmaRow, Replicated, View, in_fragment, ravel
from .common import LoweringError


class ParallelEmitter:
    """T.Parallel loops; mixed into KernelEmitter (uses its names, layouts and text helpers)."""

    def parallel(self, s: N.For) -> None:
        """A T.Parallel loop; a fragment it reads at elements other threads hold is read from a shared copy, and a
        replicated fragment it writes on some threads only is handed to every thread after it (`publish`)."""
        if self.parallel_scope.in_parallel:
            return self._parallel(s)
        start, self.parallel_scope.published = len(self.lines), {}
        self.staged_emit(s, self._parallel)
        if self.parallel_scope.published:
            self._broadcast_published(start, s)

    def publish(self, buf, target: str, idx: list[str]) -> None:
        """The thread running this iteration of a layout-driven loop wrote `target`, one element of the replicated
        fragment `buf` every thread holds whole: mirror it into a shared copy that all threads read back."""
        shape = list(shape_ints(buf.shape))
        stage = self.parallel_scope.published.get(buf) or self.fresh(f"{buf.name}_bcast")
        self.parallel_scope.published[buf] = stage
        self.frame.scratch[stage] = (buf.dtype, math.prod(shape))  # again after a staging retry dropped it
        self.line(f"{stage}[{ravel(idx, shape)}] = {target}")

    def _broadcast_published(self, start: int, s: N.For) -> None:
        """Around loop `s` emitted from line `start`: fill each published copy from the (identical) replicated
        registers first unless `s` writes every element, so the rest keep their values; read it back whole after."""
        partial = [(buf, stage) for buf, stage in self.parallel_scope.published.items() if not _writes_whole(s, buf)]
        if partial:
            end = len(self.lines)
            self.sync()
            for buf, stage in partial:
                with self.spread(math.prod(shape_ints(buf.shape))) as e:
                    self.line(f"{stage}[{e}] = {self.name(buf)}[{e}]")
            self.sync()
            prefill = self.lines[end:]
            del self.lines[end:]
            self.lines[start:start] = prefill
        self.sync()
        for buf, stage in self.parallel_scope.published.items():
            regs = math.prod(shape_ints(buf.shape))
            r = self.fresh("r")
            self.line(f"for {r} in {'T.unroll' if regs <= 256 else 'T.serial'}({regs}):")
            with self.block():
                self.line(f"{self.name(buf)}[{r}] = {stage}[{r}]")
        self.sync()
        self.parallel_scope.published = {}

    def staged_emit(self, s: N.For, emit) -> None:
        """`emit(s)`; when a T.Parallel loop inside reads fragment elements other threads hold, emit again with a
        shared copy of that fragment staged before the outermost loop of serial loops around it that never
        writes the fragment (once, not every iteration), or else before the Parallel loop itself."""
        scope, barriers = self.parallel_scope, self.barrier_state
        state = (len(self.lines), len(self.frame.allocs), dict(self.frame.scratch), self.depth, scope.par, scope.owner,
                 scope.in_parallel, barriers.dirty_r, barriers.dirty_w)
        staged = []
        scope.stage_sites.append(s)
        try:
            while True:
                try:
                    return emit(s)
                except UnservedFragmentRead as exc:
                    buf = exc.buffer
                    if buf in scope.staged or _stage_site(scope.stage_sites, buf) is not s:
                        raise
                    del self.lines[state[0]:], self.frame.allocs[state[1]:]
                    self.frame.scratch = dict(state[2])
                    self.depth, scope.par, scope.owner, scope.in_parallel = state[3:7]
                    barriers.dirty_r, barriers.dirty_w = state[7:]
                    for b in staged:
                        self.stage_fragment(b)
                    staged.append(buf)
                    self.stage_fragment(buf)
                    state = (len(self.lines), len(self.frame.allocs), dict(self.frame.scratch), *state[3:])
        finally:
            scope.stage_sites.pop()
            for b in staged:
                scope.staged.pop(b, None)

    def stage_fragment(self, buf) -> None:
        """Write every element of fragment `buf` to a shared scratch copy that any thread can read."""
        lay, shape = self.plan.layouts[buf], list(shape_ints(buf.shape))
        stage = self.fresh(f"{buf.name}_shared")
        self.frame.scratch[stage] = (buf.dtype, math.prod(shape))
        self.sync()  # an earlier run of this loop (inside a serial loop) may still be reading the copy
        r = self.fresh("r")
        self.line(f"for {r} in {'T.unroll' if lay.regs <= 256 else 'T.serial'}({lay.regs}):")
        with self.block():
            self.guarded(in_fragment(lay, "tx", r), f"{stage}[{ravel(lay.coords('tx', r), shape)}] = {self.name(buf)}[{r}]")
        self.sync()
        self.parallel_scope.staged[buf] = stage

    def unstage_fragment(self, buf) -> None:
        """Read each thread's elements of fragment `buf` back from the shared copy `stage_fragment` made."""
        stage, lay = self.parallel_scope.staged.pop(buf), self.plan.layouts[buf]
        self.sync()
        r = self.fresh("r")
        self.line(f"for {r} in {'T.unroll' if lay.regs <= 256 else 'T.serial'}({lay.regs}):")
        with self.block():
            at = ravel(lay.coords("tx", r), list(shape_ints(buf.shape)))
            self.guarded(in_fragment(lay, "tx", r), f"{self.name(buf)}[{r}] = {stage}[{at}]")
        self.sync()

    def _parallel(self, s: N.For) -> None:
        from ...passes.layouts import fragment_accesses

        accesses = list(fragment_accesses(s.body))
        full = [b for b, idx in accesses if len(idx) == len(s.vars) and all(i is v for i, v in zip(idx, s.vars))]
        layouts = self.plan.layouts
        driver = next((layouts[b] for b in full if not isinstance(layouts.get(b), Replicated)), None)
        if driver is None:
            s, driver = self._rebased(s, accesses)
        with self.parallel_scope.diverging():
            if driver is not None:
                return self._parallel_layout(s, driver)
            rows = self._row_layout(s, accesses)
            if rows is not None:
                return self._parallel_rows(s, rows)
            if accesses:
                return self._parallel_replicated(s)
            return self.parallel_distributed(s)

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
            old, old_owner = self.parallel_scope.par, self.parallel_scope.owner
            self.parallel_scope.par = (lay, r, s.vars)
            if isinstance(lay, (Mma, MmaRow, View)) and lay.one_copy("tx"):  # rows copied over lanes / warps
                self.parallel_scope.owner = lay.one_copy("tx")
            conds = in_fragment(lay, "tx", r)
            conds += [f"{c} < {e}" for c, e, d in zip(coords, extents, shape) if e < d]  # a loop shorter than the tile
            if conds:
                self.line(f"if {' and '.join(conds)}:")
                with self.block():
                    self.body(s.body)
            else:
                self.body(s.body)
            self.parallel_scope.par, self.parallel_scope.owner = old, old_owner

    def _parallel_replicated(self, s: N.For) -> None:
        """Every thread runs every iteration (the loop only touches replicated fragments); an atomic in
        it runs once per iteration, on the thread the flat iteration index maps to."""
        flat = "0"
        for v, st, ext in zip(s.vars, s.starts, s.extents):
            flat = f"({flat} * {self.idx(ext)} + {self.name(v)} - {self.idx(st)})"
        old, self.parallel_scope.owner = self.parallel_scope.owner, f"T.floormod({flat}, {self.threads}) == tx"
        try:
            self.serial(N.For(s.vars, s.starts, s.extents, "serial", s.body, span=s.span))
        finally:
            self.parallel_scope.owner = old

    def _rebased(self, s: N.For, accesses: list):
        """(loop, driver layout) for a loop indexing a fragment at constant offsets of its variables
        (`acc[i + 16, j]`), re-based on the fragment (passes.loop_shift); (s, None) otherwise."""
        from ...passes.loop_shift import index_shifts, rebase_on_fragment

        for b, idx in accesses:
            lay, shifts, shape = self.plan.layouts.get(b), index_shifts(idx, s.vars), shape_ints(b.shape)
            if shifts is not None and not isinstance(lay, Replicated) and shape and len(shape) == len(s.vars):
                same = {c for c, _ in accesses if self.plan.layouts.get(c) == lay}
                return rebase_on_fragment(s, same, shifts, list(shape)), lay
        return s, None

    def _row_layout(self, s: N.For, accesses: list):
        """The MmaRow layout of a Parallel loop whose fragment accesses are all row vectors indexed by its
        first variable (`S[h, k] = S[h, k] - m[h]` with m a reduction of a gemm tile), else None."""
        lays = {self.plan.layouts.get(b) for b, _ in accesses}
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
            old, old_owner = self.parallel_scope.par, self.parallel_scope.owner
            self.parallel_scope.par, self.parallel_scope.owner = (lay, r, s.vars[:1]), None
            self._split_iterations(N.For(s.vars[1:], s.starts[1:], s.extents[1:], "parallel", s.body, span=s.span),
                                   rep, nrep)
            self.parallel_scope.par, self.parallel_scope.owner = old, old_owner

    def parallel_distributed(self, s: N.For) -> None:
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
                st is inner for st in flat_stmts(outer.body)):
            break
        inner = outer
    return inner


def _writes_whole(s: N.For, buf) -> bool:
    """True when Parallel loop `s` stores `buf[v0, v1, ...]` unconditionally, its extents `buf`'s shape."""
    if [as_int(st) for st in s.starts] != [0] * len(s.vars) or [as_int(e) for e in s.extents] != list(
            shape_ints(buf.shape) or ()):
        return False
    return any(isinstance(st, N.Store) and st.buffer is buf and len(st.indices) == len(s.vars)
               and all(i is v for i, v in zip(st.indices, s.vars)) for st in flat_stmts(s.body))


def _writes(s: N.For, buf) -> bool:
    """True when the loop `s` stores to `buf` or a tile op in it writes `buf`."""
    for node in walk(s.body):
        if isinstance(node, N.Store) and node.buffer is buf:
            return True
        if isinstance(node, N.TILE_OPS) and any(w.buffer is buf for w in op_regions(node)[1]):
            return True
    return False
