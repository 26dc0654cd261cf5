"""Blackwell-only constructs (tensor memory, TCGEN05 MMA) in a kernel built for sm_80 … sm_90a: one diagnostic per
kernel, at the first such construct, saying what it needs and what the Hopper/Ampere spelling is."""
from __future__ import annotations

from ...ir import nodes as N
from ..walker import Ctx, rule

CODE = "needs-sm100"
_FIX = ("these targets (sm_80 … sm_90a) have no tensor memory: accumulate in "
        "T.alloc_fragment((block_M, block_N), accum_dtype) with T.gemm, or build this kernel for sm_100 with "
        "the real TileLang")


@rule(N.Allocate)
def check_tmem_allocation(node: N.Allocate, ctx: Ctx) -> None:
    """A buffer in tensor memory (T.alloc_tmem, scope="shared.tmem")."""
    if node.buffer.scope == "shared.tmem":
        _once(ctx, f"`{node.buffer.name}` lives in tensor memory (T.alloc_tmem / shared.tmem), which needs "
                   f"sm_100 (Blackwell); {_FIX}", node.span)


@rule(N.Evaluate)
def check_tcgen05_call(node: N.Evaluate, ctx: Ctx) -> None:
    """A T.tcgen05_* intrinsic."""
    call = node.value
    if isinstance(call, N.Call) and call.name.startswith("tcgen05"):
        _once(ctx, f"T.{call.name} is a TCGEN05 (Blackwell) instruction and needs sm_100; {_FIX}", node.span)


def uses_tmem(buf) -> bool:
    """True for a tensor-memory buffer (its uses are covered by the one needs-sm100 diagnostic)."""
    return getattr(buf, "scope", None) == "shared.tmem"


def _once(ctx: Ctx, message: str, span) -> None:
    """Report at most one needs-sm100 per kernel instance."""
    key = (ctx.func.name, ctx.func.instance or None)
    if any(d.code == CODE and (d.kernel, d.instance) == key for d in ctx.sink.items):
        return
    ctx.emit(CODE, message, span)
