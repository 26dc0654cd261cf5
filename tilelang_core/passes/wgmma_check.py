"""T.wgmma_gemm asks for Hopper's wgmma with no mma.sync fallback: the gemms that cannot be one are refused.

The gate (lowering.refuse_errors) runs it for every target, the CPU backend included: there the gemm is judged as
sm_90a would lower it, so the reference backend rejects what TileLang rejects on the GPU the builtin exists for.
"""
from __future__ import annotations

from ..analysis.resources import block_threads
from ..diagnostics import DiagnosticSink
from ..ir import nodes as N
from ..ir.arith import as_int
from ..ir.visitor import walk
from ..target import canonical, parse_target
from .plan import wgmma_gemms
from .roles import Roles

CODE = "wgmma-unavailable"
MESSAGE = ("T.wgmma_gemm() requires Hopper WGMMA lowering, which this gemm does not meet (an sm_90 target; fp16/bf16/"
           "fp8 inputs, B in shared memory, a float32 accumulator (or float16, of fp16/fp8 inputs) whose M is a "
           "multiple of 64 per warp group of the block): use T.gemm to let it run as mma.sync")
HOPPER = "sm_90a"  # the arch a T.wgmma_gemm is judged for on the CPU backend


def check_wgmma_gemms(func: N.PrimFunc, target, sink: DiagnosticSink) -> None:
    """At each T.wgmma_gemm of `func`: `wgmma-unavailable` where TileLang would not lower it to wgmma for `target`,
    `lowering-unsupported` where it would but our CUDA lowering cannot (a float16 accumulator)."""
    arch = canonical(target)
    if arch != "cpu" and parse_target(arch).arch.capability < (9, 0):
        return  # the checker's needs-sm90 says it at each T.wgmma_gemm (analysis/checks/wgmma_arch.py)
    for launch in _launches(func):
        asked = [g for g in walk(launch) if isinstance(g, N.Gemm) and g.wgmma]
        threads = block_threads(launch)
        if not asked or threads is None:
            continue
        sub = N.PrimFunc(func.name, func.params, launch, span=func.span)
        roles = Roles(sub, threads)
        valid = wgmma_gemms(sub, HOPPER if arch == "cpu" else arch, threads, roles, f16_accumulator=True)
        ours = valid if arch == "cpu" else wgmma_gemms(sub, arch, threads, roles)
        for g in asked:
            if id(g) not in valid:
                sink.emit(CODE, MESSAGE, g.span, kernel=func.name, instance=func.instance, target=arch)
            elif id(g) not in ours:
                sink.emit("lowering-unsupported", "T.wgmma_gemm with a float16 accumulator: the CUDA lowering's wgmma "
                          "takes float32 accumulators only yet; accumulate in T.float32 (the CPU backend runs this "
                          "gemm as it is)", g.span, kernel=func.name, instance=func.instance, target=arch)


def _launches(func: N.PrimFunc) -> list[N.Launch]:
    stmts = func.body.stmts if isinstance(func.body, N.SeqStmt) else (func.body,)
    return [s for s in stmts if isinstance(s, N.Launch)]
