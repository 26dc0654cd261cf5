"""The plan of one kernel before it is emitted: layouts, software pipelines, shared-memory swizzles, wgmma gemms
and the warp-specialised TMA schedule, computed once per kernel and lowering (`plan_kernel`); the driver's stage
texts (lowering.py) and the emitter (generate.tvmscript) read the same `KernelPlan`."""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.visitor import walk
from ...passes.layouts import LayoutError, infer_layouts
from ...passes.loop_exits import lower_loop_exits
from ...passes.plan import plan_pipelines, shared_layouts, wgmma_gemms
from ...passes.roles import Roles
from ...target import CP_ASYNC, MMA_SYNC, parse_target
from .common import LoweringError, used_buffers, view_root
from .cpasync import STATEMENTS as CP_ASYNC_CALLS
from .persistent import plan_schedule
from .tma import WarpSpecialization, plan_tma


@dataclass
class KernelPlan:
    """Everything planned for one kernel (one `with T.Kernel` block) before it is emitted."""

    func: N.PrimFunc        # after lower_loop_exits: the tree the layouts and the schedule refer to
    launch: N.Launch
    threads: int
    layouts: dict           # buffer -> layout (passes/layouts.py)
    pipelines: dict         # id(loop) -> PipelinePlan
    swizzled: dict          # shared Buffer -> "atoms" | "rows"
    wgmma: dict             # id(gemm) -> Gemm lowered to wgmma
    ws: WarpSpecialization | None  # the TMA + mbarrier schedule (tma.plan_tma), None for cp.async


def plan_kernel(func: N.PrimFunc, arch: str) -> KernelPlan:
    """Plan one kernel for `arch` under the current CodegenOptions; raises LoweringError."""
    func = lower_loop_exits(func)  # break/continue become flags; plan() then sees the same buffers
    launch, threads, layouts, pipes, swz, wgmma = plan(func, arch)
    ws = plan_tma(func, launch, pipes, swz, wgmma, arch, threads, bool(Roles(func, threads).branches))
    if ws is not None:  # a persistent tile loop and a TMA-store epilogue where they apply (persistent.py)
        plan_schedule(ws, func, launch, layouts, arch)
    return KernelPlan(func, launch, threads, layouts, pipes, swz, wgmma, ws)


def threads_of(launch: N.Launch) -> int:
    """Threads per block of a T.Kernel (the product of its thread dims)."""
    total = 1
    for t in launch.threads:
        v = as_int(t)
        if v is None:
            raise LoweringError("threads= of T.Kernel must be a compile-time constant", launch.span)
        total *= v
    return total


def plan(func: N.PrimFunc, arch: str):
    """(launch, threads, layouts, pipelines, shared layouts, wgmma gemms) for a kernel; raises LoweringError."""
    func = lower_loop_exits(func)
    launch = func.launch
    if launch is None:
        raise LoweringError("the kernel has no `with T.Kernel(...)` block", func.span)
    _one_launch(func)
    _check_views(func)
    threads = threads_of(launch)
    _check_abilities(func, arch)
    roles = Roles(func, threads)  # tile ops inside an `if` on a range of threads run on those threads
    wgmma = wgmma_gemms(func, arch, threads, roles)
    try:
        try:
            layouts = infer_layouts(func, threads, frozenset(wgmma), roles)
            smem = shared_layouts(func, arch, threads, wgmma)
        except (LayoutError, ValueError):
            if not wgmma:
                raise
            # wgmma and mma.sync gemms lay out accumulator rows and shared tiles differently: a row vector
            # or a tile both use (flash attention with an output tile too wide for wgmma) needs one kind
            wgmma = {}
            layouts, smem = infer_layouts(func, threads, frozenset(), roles), shared_layouts(func, arch, threads, wgmma)
    except (LayoutError, ValueError) as exc:
        raise LoweringError(str(exc), getattr(exc, "span", None) or launch.span, "layout-inference-failed") from None
    return launch, threads, layouts, plan_pipelines(func), smem, wgmma


def _check_abilities(func: N.PrimFunc, arch: str) -> None:
    """Raise at the first construct whose lowering needs an ability `arch` lacks (sm_75: tensor-core gemms are
    m16n8k16 mma.sync, multi-stage pipelines and T.ptx_cp_async copy with cp.async, both sm_80)."""
    target = parse_target(arch)
    fix = "; build for sm_80 or newer"
    if not target.has(MMA_SYNC):
        gemm = next((n for n in walk(func.body) if isinstance(n, N.Gemm)), None)
        if gemm is not None:
            raise LoweringError(f"T.gemm on {arch}: its tensor-core lowering is m16n8k16 mma.sync, which needs "
                                f"sm_80{fix}", gemm.span)
    if not target.has(CP_ASYNC):
        for loop in (p.loop for p in plan_pipelines(func).values()):
            raise LoweringError(f"a T.Pipelined loop with num_stages >= 2 on {arch}: its copies overlap through "
                                f"cp.async, which needs sm_80; use num_stages=1 (or T.serial){fix}", loop.span)
        call = next((n for n in walk(func.body) if isinstance(n, N.Call) and n.name in CP_ASYNC_CALLS), None)
        if call is not None:
            raise LoweringError(f"T.{call.name} on {arch}: cp.async needs sm_80{fix}", call.span)


def _one_launch(func: N.PrimFunc) -> None:
    """Raise at the second `T.Kernel` of a prim_func: one kernel is planned and emitted at a time."""
    stmts = func.body.stmts if isinstance(func.body, N.SeqStmt) else (func.body,)
    launches = [s for s in stmts if isinstance(s, N.Launch)]
    if len(launches) > 1:
        raise LoweringError(f"this prim_func opens {len(launches)} `with T.Kernel(...)` blocks; plan each part "
                            "of `cuda_split.split_kernels` on its own", launches[1].span)


def _check_views(func: N.PrimFunc) -> None:
    """Views (T.reshape, T.view, T.Tensor(shape, dtype, A.data)) of tensors and shared tiles alias their
    storage; raise at a view of anything else, and at a buffer that is neither declared nor a view."""
    known = {p for p in func.params if isinstance(p, N.Buffer)}
    known |= {n.buffer for n in walk(func.body) if isinstance(n, N.Allocate)}
    for buf in used_buffers(func.body):
        root = view_root(buf)
        if buf in known or buf.data is not None:  # a parameter, an allocation, or a tensor over a bound pointer
            continue
        if root not in known:
            raise LoweringError(f"'{buf.name}' is neither a parameter, an allocation nor a view of one", buf.span)
        if root.scope not in ("global", "shared.dyn", "shared", "local.fragment"):
            raise LoweringError(f"'{buf.name}' is a view (T.reshape / T.view) of the {root.scope} buffer "
                                f"'{root.name}'; the CUDA lowering supports views of tensors, shared tiles and "
                                f"fragments only yet: index '{root.name}' itself", buf.span)
