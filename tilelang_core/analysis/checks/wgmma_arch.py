"""T.wgmma_gemm in a kernel built for a GPU older than Hopper: wgmma is an sm_90a instruction, so the gemm the user
pinned to it cannot be lowered there (T.gemm would fall back to mma.sync)."""
from __future__ import annotations

from ...ir import nodes as N
from ...target import gpu_archs
from ..fastwalk import walk
from ..walker import Ctx
from .common import related_for

CODE = "needs-sm90"


def check_wgmma_targets(func: N.PrimFunc, targets, ctx: Ctx) -> None:
    """One needs-sm90 per T.wgmma_gemm for each CUDA target below compute capability 9.0."""
    old = [a.name for a in gpu_archs(targets) if a.capability < (9, 0)]
    if not old or func.body is None:
        return
    for node in walk(func.body):
        if isinstance(node, N.Gemm) and node.wgmma:
            ctx.emit(CODE, f"T.wgmma_gemm() requires Hopper WGMMA lowering, which {', '.join(old)} does not have "
                           f"(wgmma is an sm_90a instruction): build this kernel for sm_90a, or call T.gemm, which "
                           f"lowers to mma.sync there", node.span, related=related_for(node.a.buffer))
