"""The multi-buffered software pipeline for T.Pipelined loops (cp.async producers run ahead of consumers).

Mixed into `lower.KernelEmitter`; the plan (which copies are producers) comes from `passes.plan`.
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int


class PipelineEmitter:
    """Emission of planned T.Pipelined loops (methods of KernelEmitter)."""

    def pipelined(self, s: N.For, plan) -> None:
        """Multi-buffered loop: producers (cp.async) run num_stages-1 iterations ahead of consumers."""
        ns = plan.num_stages
        v = s.vars[0]
        start, n = self.idx(s.starts[0]), self.idx(s.extents[0])
        for buf in plan.buffers:
            self.stages[buf] = ns
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
        if self._async_mma(plan):
            return self._pipelined_async_mma(s, plan, it, start, n)
        self.line(f"for {it}_i in T.serial({n}):")
        with self.block():
            self.line(f'T.cuda.func_call("tl::cp_async_wait<{max(ns - 2, 0)}>", source_code="")')
            self.sync()
            self.line(f"if {it}_i + {ns - 1} < {n}:")
            with self.block():
                self._producers(plan, v, f"({start} + {it}_i + {ns - 1})", f"T.floormod({it}_i + {ns - 1}, {ns})")
            self.line('T.cuda.func_call("tl::cp_async_commit", source_code="")')
            for buf in plan.buffers:
                self.stage_idx[buf] = f"T.floormod({it}_i, {ns})"
            self.var_text[v] = f"({start} + {it}_i)" if start != "0" else f"{it}_i"
            n0 = len(self.lines)
            for c in plan.consumers:
                self.stmt(c)
            if len(self.lines) == n0:
                self.line("T.evaluate(0)")
        for buf in plan.buffers:
            self.stage_idx.pop(buf, None)
        self.line('T.cuda.func_call("tl::cp_async_wait<0>", source_code="")')
        self.sync()

    def _async_mma(self, plan) -> bool:
        """Opt-in (TILELSP_ASYNC_WGMMA=1) when the only consumer is a wgmma gemm: wgmma k stays in flight
        while the loads for k+num_stages-1 are issued. Correct on the H200 but slower there (430 vs 454
        TFLOP/s at 4096^3, benchmarks/results/gpu_h200_2026-12-02_async_wgmma.json), hence off by default."""
        import os

        only = plan.consumers[0] if len(plan.consumers) == 1 else None
        return (isinstance(only, N.Gemm) and id(only) in self.wgmma and not only.clear_accum
                and os.environ.get("TILELSP_ASYNC_WGMMA") == "1")

    def _pipelined_async_mma(self, s: N.For, plan, it: str, start: str, n: str) -> None:
        """Loop body: wait for tile k; issue wgmma k; wait until wgmma k-1 is done; refill its slot."""
        ns, v = plan.num_stages, s.vars[0]
        self.line(f"for {it}_i in T.serial({n}):")
        with self.block():
            self.line(f'T.cuda.func_call("tl::cp_async_wait<{max(ns - 2, 0)}>", source_code="")')
            self.sync()
            for buf in plan.buffers:
                self.stage_idx[buf] = f"T.floormod({it}_i, {ns})"
            self.var_text[v] = f"({start} + {it}_i)" if start != "0" else f"{it}_i"
            self.wgmma_nowait = True
            self.stmt(plan.consumers[0])
            self.wgmma_nowait = False
            self.line('T.cuda.func_call("tl::wgmma_wait<1>", source_code="")')
            if self.threads > 128:  # another warpgroup may still read the slot we refill next
                self.line('T.tvm_storage_sync("shared")')
            self.line(f"if {it}_i + {ns - 1} < {n}:")
            with self.block():
                self._producers(plan, v, f"({start} + {it}_i + {ns - 1})", f"T.floormod({it}_i + {ns - 1}, {ns})")
            self.line('T.cuda.func_call("tl::cp_async_commit", source_code="")')
        for buf in plan.buffers:
            self.stage_idx.pop(buf, None)
        self.line('T.cuda.func_call("tl::wgmma_wait<0>", source_code="")')
        self.line('T.cuda.func_call("tl::cp_async_wait<0>", source_code="")')
        self.sync()

    def _producers(self, plan, v, k_text: str, stage_text: str) -> None:
        self.var_text[v] = k_text
        for buf in plan.buffers:
            self.stage_idx[buf] = stage_text
        for p in plan.producers:
            self.ops.copy(p, async_ok=True)

