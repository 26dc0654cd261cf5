"""The multi-buffered software pipeline for T.Pipelined loops (cp.async producers run ahead of consumers), and
on sm_90a its warp-specialised form (a TMA producer warpgroup, full/empty mbarriers; the schedule is `tma.plan_tma`).

Mixed into `lower.KernelEmitter`; the plan (which copies are producers) comes from `passes.plan`.
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int, shape_ints
from ...options import current_options
from .cluster import empty_count, release_fn
from .common import shared_rw
from .persistent import tiles
from .overlap import emit_overlapped, load_groups, overlap_enabled
from .streamk import emit_fixup, split


class PipelineEmitter:
    """Emission of planned T.Pipelined loops (methods of KernelEmitter; the warp roles' state is em.roles)."""

    def pipelined(self, s: N.For, plan) -> None:
        """Multi-buffered loop: producers (cp.async) run num_stages-1 iterations ahead of consumers."""
        if self.roles.ws is not None and self.roles.ws.plan is plan:
            return self._consumer_loop(s, plan)
        ns = plan.num_stages
        v = s.vars[0]
        start, n = self.idx(s.starts[0]), self.idx(s.extents[0])
        for buf in plan.buffers:
            self.pipeline.stages[buf] = ns
        it = self.name(v)
        n_static = as_int(s.extents[0])
        for p in range(ns - 1):
            if n_static is not None and p < n_static:
                self._producers(plan, v, f"({start} + {p})", str(p))
            elif n_static is None:
                self.line(f"if {p} < {n}:")
                with self.block():
                    self._producers(plan, v, f"({start} + {p})", str(p))
            self.line('T.cuda.func_call("tl::cp_async_commit", source_code="")')
        self.line(f"for {it}_i in T.serial({n}):")
        with self.block():
            self.line(f'T.cuda.func_call("tl::cp_async_wait<{max(ns - 2, 0)}>", source_code="")')
            self.sync()
            self.line(f"if {it}_i + {ns - 1} < {n}:")
            with self.block():
                self._producers(plan, v, f"({start} + {it}_i + {ns - 1})", f"T.floormod({it}_i + {ns - 1}, {ns})")
            self.line('T.cuda.func_call("tl::cp_async_commit", source_code="")')
            for buf in plan.buffers:
                self.pipeline.stage_idx[buf] = f"T.floormod({it}_i, {ns})"
            self.var_text[v] = f"({start} + {it}_i)" if start != "0" else f"{it}_i"
            n0 = len(self.lines)
            for c in plan.consumers:
                self.stmt(c)
            if len(self.lines) == n0:
                self.line("T.evaluate(0)")
        for buf in plan.buffers:
            self.pipeline.stage_idx.pop(buf, None)
        self.line('T.cuda.func_call("tl::cp_async_wait<0>", source_code="")')
        self.sync()

    def _producers(self, plan, v, k_text: str, stage_text: str) -> None:
        self.var_text[v] = k_text
        for buf in plan.buffers:
            self.pipeline.stage_idx[buf] = stage_text
        for p in plan.producers:
            self.ops.copy(p, async_ok=True)


    # ------------------------------------------------------------------ warp-specialised TMA pipeline
    def specialized(self, body) -> None:
        """The kernel body split by role: barrier setup, the producer warpgroup's TMA loop, the consumers' body."""
        ws, ns = self.roles.ws, self.roles.ws.plan.num_stages
        groups = load_groups(ws, overlap_enabled(ws.plan, self.plan.wgmma, ws))
        self.roles.bars = self.fresh("tma_bar")
        self.frame.scratch[self.roles.bars] = ("uint64", 2 * ns * len(groups))
        for buf in ws.plan.buffers:
            self.pipeline.stages[buf] = ns
        for let in ws.hoisted if ws.persistent is None else ():  # persistent: recomputed per tile (`tiles`)
            self.stmt(let)
        self.line("if tx == 0:")
        with self.block():
            for i in range(2 * ns * len(groups)):
                count = "1" if i % (2 * ns) < ns else str(empty_count(ws))  # full: the producer; empty: consumers
                self.device_call("tl::mbar_init", f"{self.roles.bars}.ptr_to([{i}])", count)
            self.device_call("tl::mbar_fence_init")
        self.line('T.tvm_storage_sync("shared")')
        if ws.cluster is not None:  # the peer block arrives on these barriers and multicasts into this block
            self.device_call("tl::cluster_sync")
        regs = ws.registers
        self.line(f"if tx >= {ws.consumers}:")
        with self.block():
            if regs:
                self.device_call(f"tl::reg_dealloc<{regs[0]}>")
            self.line(f"if tx == {ws.consumers}:")
            with self.block():
                for m in ws.tensor_maps:
                    self.device_call("tl::tma_prefetch", m["arg"])
                for _ in tiles(self, self.plan.func.launch, "producer"):
                    self._tma_producer(ws, groups)
        self.line("else:")
        with self.block():
            if regs:
                self.device_call(f"tl::reg_alloc<{regs[1]}>")
            stmts = body.stmts if isinstance(body, N.SeqStmt) else (body,)
            hoisted = ws.hoisted if ws.persistent is None else ()
            own = N.SeqStmt(tuple(st for st in stmts if not any(st is h for h in hoisted)))
            for piece in tiles(self, self.plan.func.launch, "consumer"):
                if piece is None:
                    self.body(own)
                else:  # a stream-K piece: its k-steps, then the partial sums met (streamk.emit_fixup)
                    loop, epilogue = split(own)
                    self.body(N.SeqStmt(loop))
                    emit_fixup(self, ws.stream_k, piece, epilogue)
        if ws.cluster is not None:  # no block exits while its peer may still arrive on its barriers
            self.device_call("tl::cluster_sync")

    def _ring(self, k: str) -> str:
        """The stage ring's iteration of loop iteration `k` (a persistent kernel's ring continues across tiles)."""
        return k if self.roles.ring_base is None else f"({self.roles.ring_base} + {k})"

    def stage_of(self, k: str, ns: int) -> str:
        """The stage of ring iteration `k` among `ns`."""
        return f"T.floormod({k}, {ns})" if k != "0" else "0"

    def wait_full(self, k: str, ns: int, base: int = 0) -> None:
        """Wait until ring iteration k's bytes have landed (the phase of k of the full mbarrier at `base`)."""
        offset = f" + {base}" if base else ""
        self.device_call("tl::mbar_wait", f"{self.roles.bars}.ptr_to([{self.stage_of(k, ns)}{offset}])",
                         f"T.floormod(T.floordiv({k}, {ns}), 2)")

    def device_call(self, fn: str, *args: str) -> None:
        """A statement calling device-library function `fn` with `args`."""
        self.line(f'T.cuda.func_call("{fn}", {"".join(a + ", " for a in args)}source_code="")')

    def _tma_producer(self, ws, groups) -> None:
        """One thread: per k and set of mbarriers (`overlap.load_groups`), wait until the stage is free, expect its
        bytes, issue every atom's bulk copy."""
        s, ns = ws.plan.loop, ws.plan.num_stages
        v = s.vars[0]
        start, n, it = self._k_start(s), self._k_count(s), self.name(v)
        self.line(f"for {it}_i in T.serial({n}):")
        with self.block():
            stage = f"T.floormod({self._ring(f'{it}_i')}, {ns})"
            self.var_text[v] = f"({start} + {it}_i)" if start != "0" else f"{it}_i"
            for loads, base in groups:
                full = f"{self.roles.bars}.ptr_to([{stage}{f' + {base}' if base else ''}])"
                self.device_call("tl::mbar_wait", f"{self.roles.bars}.ptr_to([{stage} + {base + ns}])",
                                 f"T.floormod(T.floordiv({self._ring(f'{it}_i')}, {ns}) + 1, 2)")
                self.device_call("tl::mbar_expect_tx", full, str(sum(ld.bytes for ld in loads)))
                for ld in loads:
                    starts = [self.idx(a.start) for a in reversed(ld.axes)]
                    atoms = self.plan.swizzled.get(ld.tile) == "atoms"
                    for j in range(ld.atoms):
                        coords = [f"({starts[0]} + {ld.tmap['box'][0] * j})" if j else starts[0]] + starts[1:]
                        dst = f"{self.name(ld.tile)}.ptr_to([{stage}, {f'{j}, 0, 0' if atoms else '0, 0'}])"
                        fn = ws.cluster.load_fn(ld, j, len(ld.axes)) if ws.cluster else f"tl::tma_load_{len(ld.axes)}d"
                        self.device_call(fn, ld.tmap["arg"], dst, full, *coords)

    def _consumer_loop(self, s: N.For, plan) -> None:
        """Consumers: wait for stage k's bytes, run the body on it, release the stage. A lone wgmma gemm of one
        consumer warpgroup keeps wgmma k in flight while it waits for stage k+1 (`_in_flight`: iteration 0 peeled,
        iteration k releases stage k-1 once wgmma k-1 is done); otherwise each gemm waits for its own group."""
        ov = overlap_enabled(plan, self.plan.wgmma, self.roles.ws)
        if ov is not None:  # gemm -> softmax -> gemm: the softmax of k under the second gemm of k-1
            return emit_overlapped(self, s, plan, ov)
        ns, v, roles = plan.num_stages, s.vars[0], self.roles
        start, n, it = self._k_start(s), self._k_count(s), self.name(v)
        acc = self._in_flight(s, plan)
        if acc:  # iteration 0 peeled: no branch between a wgmma and its wait_group (ptxas would serialise, C7514)
            self._consumer_step(plan, v, start, "0", True)
        trips = n if not acc else str(as_int(s.extents[0]) - 1) if roles.k_range is None else f"{n} - 1"
        self.line(f"for {it}_i in T.serial({trips}):")
        with self.block():
            k = f"({it}_i + 1)" if acc else f"{it}_i"
            self._consumer_step(plan, v, start, k, bool(acc))
            if acc:
                self.device_call(f"tl::wgmma_wait_fenced<1, {acc[1]}>", acc[0])
            ring = self._ring(f"{it}_i")
            self.device_call(release_fn(roles.ws), f"{roles.bars}.ptr_to([T.floormod({ring}, {ns}) + {ns}])")
        for buf in plan.buffers:
            self.pipeline.stage_idx.pop(buf, None)
        if acc:
            self.device_call(f"tl::wgmma_wait_fenced<0, {acc[1]}>", acc[0])
            if roles.ring_base is not None:  # the next tile's producer waits for the last stage too
                last = self._ring(str(as_int(s.extents[0]) - 1) if roles.k_range is None else f"{n} - 1")
                self.device_call(release_fn(roles.ws), f"{roles.bars}.ptr_to([T.floormod({last}, {ns}) + {ns}])")
        self.barrier_state.touched()

    def _k_start(self, s: N.For) -> str:
        """The loop's first k (a stream-K piece's first step in its tile, `k_range`)."""
        start = self.idx(s.starts[0])
        if self.roles.k_range is None:
            return start
        return self.roles.k_range[0] if start == "0" else f"({start} + {self.roles.k_range[0]})"

    def _k_count(self, s: N.For) -> str:
        """The loop's trip count (a stream-K piece's steps, `k_range`)."""
        return self.idx(s.extents[0]) if self.roles.k_range is None else self.roles.k_range[1]

    def _consumer_step(self, plan, v, start: str, k: str, in_flight: bool) -> None:
        """Iteration k of the consumers: wait for its stage's bytes, then the loop body (its wgmma group left in
        flight when `in_flight`)."""
        ns, g = plan.num_stages, self._ring(k)
        stage = self.stage_of(g, ns)
        self.wait_full(g, ns)
        for buf in plan.buffers:
            self.pipeline.stage_idx[buf] = stage
        self.var_text[v] = k if start == "0" else f"({start} + {k})"
        # the stage's tiles are ordered by full[]; earlier writes were synchronised before the loop; the back edge
        # may race with this iteration only when the consumers write shared memory themselves
        self.barrier_state.synced()
        if any(shared_rw(c)[1] for c in plan.consumers):
            self.barrier_state.touched()
        self.pipeline.wgmma_nowait = in_flight
        for c in plan.consumers:
            self.stmt(c)
        self.pipeline.wgmma_nowait = False

    def _in_flight(self, s: N.For, plan):
        """(accumulator pointer text, registers per thread) when the consumers keep wgmma k in flight: the loop's
        only consumer is a wgmma gemm over a static trip count, run by one consumer warpgroup (nothing else would
        keep the tensor cores busy while it waits) with 3 or more stages (with 2 the group in flight holds the
        stage the producer needs next). H200, results/gpu_hopper_fp8_2026-12-03.json: 128x128 tiles 13-17 %
        faster (fp16 and fp8), two warpgroups within noise of waiting, 2 stages 15 % slower; all outputs right
        with the accumulators pinned. TILELSP_WGMMA_INFLIGHT=1 forces it for any lone wgmma gemm, =0 turns it off."""
        only = plan.lone_gemm
        flag = current_options().wgmma_in_flight
        on = only is not None and id(only) in self.plan.wgmma and not only.clear_accum and (
            flag == "on" or flag != "off" and self.roles.ws.consumers == 128 and plan.num_stages >= 3)
        n_static = as_int(s.extents[0])
        cs = shape_ints(only.c.buffer.shape) if on else None
        if not (on and n_static and cs):
            return None
        regs = cs[0] * cs[1] // self.roles.ws.consumers
        return f"{self.name(only.c.buffer)}.ptr_to([0])", regs
