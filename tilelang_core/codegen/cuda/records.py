"""The records the CUDA emitter's modules share, held on KernelEmitter as em.plan, em.pipeline, em.frame,
em.parallel_scope, em.barrier_state, em.roles, em.device_library and (once planned) em.shared_memory.

A field's `writers` (its metadata) name the modules that may assign it; any other module reads it, or changes it
through the record's methods (tests/codegen/test_cuda_emitter_state.py holds every module to that)."""
from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass, field

from ...ir import nodes as N


def _written_by(*modules: str, default=None, factory=None):
    """A record field that the named modules of codegen/cuda may assign."""
    meta = {"writers": modules}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


@dataclass(frozen=True)
class KernelPlanView:
    """The kernel plan's parts the emitter reads (kernel_plan.py), fixed once emission starts."""
    func: N.PrimFunc
    layouts: dict    # buffer -> layout (passes/layouts.py)
    pipelines: dict  # id(loop) -> PipelinePlan; empty when thread roles order the stages themselves
    swizzled: dict   # shared Buffer -> "atoms" | "rows"
    wgmma: dict      # id(gemm) -> Gemm lowered to wgmma


@dataclass
class PipelineState:
    """Multi-buffered shared tiles (pipeline.py and overlap.py): their stage counts and current stage, and whether the
    next wgmma gemm (tileops.py) leaves its group in flight."""
    stages: dict = field(default_factory=dict)     # shared Buffer -> number of stages
    stage_idx: dict = field(default_factory=dict)  # shared Buffer -> stage index text while inside a pipeline
    wgmma_nowait: bool = _written_by("pipeline.py", "overlap.py", default=False)


@dataclass
class FrameDeclarations:
    """What the kernel frame (frame.py) declares ahead of the body, added to by the stages that need it."""
    scratch: dict = _written_by("parallel.py", factory=dict)  # name -> (dtype, elems): extra shared buffers
    allocs: list = field(default_factory=list)   # TVMScript lines declaring per-thread local buffers
    int_arrays: dict = field(default_factory=dict)  # base name -> local int32 array (common.local_ints)


@dataclass
class ParallelScope:
    """Where emission stands inside T.Parallel loops (parallel.py); tile ops, scans and thread roles diverge too."""
    par: tuple | None = _written_by("parallel.py")  # (layout, reg text, loop vars) inside a fragment-driven loop
    staged: dict = field(default_factory=dict)     # fragment Buffer -> shared copy read by the current Parallel loop
    published: dict = _written_by("parallel.py", factory=dict)  # replicated fragment -> shared copy written through
    stage_sites: list = field(default_factory=list)  # serial loops and the Parallel loop being emitted, outermost first
    # > 0 while threads diverge: a T.Parallel body, a scan, a branch on the thread index (no barriers there); 0 again
    # inside a thread role (lower.role_body)
    in_parallel: int = _written_by("parallel.py", "lower.py", default=0)
    owner: str | None = _written_by("parallel.py")  # condition: this thread runs the current iteration's atomics

    @contextmanager
    def diverging(self):
        """The lines emitted inside run on threads that take different paths: no block barrier is placed there."""
        self.in_parallel += 1
        try:
            yield
        finally:
            self.in_parallel -= 1


@dataclass
class BarrierState:
    """Shared memory touched since the last barrier (lower.py's sync_before places the next __syncthreads())."""
    dirty_r: bool = _written_by("parallel.py", default=False)  # a shared-memory read since the last barrier
    dirty_w: bool = _written_by("parallel.py", default=False)  # a shared-memory write since the last barrier

    def synced(self) -> None:
        """A barrier every thread of the block (or role) passes was just placed."""
        self.dirty_r = self.dirty_w = False

    def touched(self, reads: bool = True, writes: bool = True) -> None:
        """Shared memory was read and/or written (or may be, on a loop's back edge) since the last barrier."""
        self.dirty_r |= reads
        self.dirty_w |= writes


@dataclass
class RoleState:
    """The warp-specialised schedule (tma.WarpSpecialization, None without a TMA producer warpgroup; fixed once
    emission starts) and where emission stands in it."""
    ws: object = None
    bars: str | None = _written_by("pipeline.py")  # the stage ring's full/empty mbarriers (pipeline.specialized)
    ring_base: str | None = _written_by("persistent.py", "streamk.py")  # ring iterations before this tile's
    k_range: tuple | None = _written_by("streamk.py")  # (first k-step, k-step count) texts of a stream-K piece
    store_stage: str | None = _written_by("tma_store.py")  # the TMA store's shared staging tile


@dataclass
class DeviceLibrary:
    """The device-library snippets (CUDA ahead of the kernels: wrappers, inline PTX, tables) this kernel needs, in the
    order first needed; generate.py places them, each once."""
    snippets: list = field(default_factory=list)

    def need(self, code: str) -> None:
        """The kernel calls into `code`."""
        if code not in self.snippets:
            self.snippets.append(code)

    def renew(self, old: str | None, new: str) -> None:
        """`new` replaces `old` (a table that grows as the kernel is emitted), placed after everything needed so far."""
        if old in self.snippets:
            self.snippets.remove(old)
        self.snippets.append(new)


@dataclass(frozen=True)
class SharedMemoryPlan:
    """The dynamic shared-memory pool (frame.smem_plan): declaration lines, total bytes, (name, bytes, stages) each."""
    lines: list
    total: int
    breakdown: list
