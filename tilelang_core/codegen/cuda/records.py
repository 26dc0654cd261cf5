"""The records the CUDA emitter's modules share, held on KernelEmitter as em.plan, em.pipeline, em.frame,
em.parallel_scope and em.barrier_state."""
from __future__ import annotations

from dataclasses import dataclass, field

from ...ir import nodes as N


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
    """Multi-buffered shared tiles (written by pipeline.py and overlap.py): their stage counts and current stage."""
    stages: dict = field(default_factory=dict)     # shared Buffer -> number of stages
    stage_idx: dict = field(default_factory=dict)  # shared Buffer -> stage index text while inside a pipeline


@dataclass
class FrameDeclarations:
    """What the kernel frame (frame.py) declares ahead of the body, added to by the stages that need it."""
    scratch: dict = field(default_factory=dict)  # name -> (dtype, elems): extra shared buffers
    allocs: list = field(default_factory=list)   # TVMScript lines declaring per-thread local buffers


@dataclass
class ParallelScope:
    """Where emission stands inside T.Parallel loops (parallel.py; tileops, scan and thread roles raise in_parallel)."""
    par: tuple | None = None  # (layout, reg text, loop vars) inside a fragment-driven Parallel loop
    staged: dict = field(default_factory=dict)     # fragment Buffer -> shared copy read by the current Parallel loop
    published: dict = field(default_factory=dict)  # replicated fragment -> shared copy the loop writes through
    stage_sites: list = field(default_factory=list)  # serial loops and the Parallel loop being emitted, outermost first
    in_parallel: int = 0      # > 0 while threads diverge: a T.Parallel body, a scan, a role (no barriers there)
    owner: str | None = None  # condition: this thread runs the current iteration's atomics


@dataclass
class BarrierState:
    """Shared memory touched since the last barrier (lower.py's sync_before; ops placing their own reset it)."""
    dirty_r: bool = False  # a shared-memory read since the last barrier
    dirty_w: bool = False  # a shared-memory write since the last barrier
