"""`T.atomic_add(out, tile, use_tma=True)` for CUDA: the TMA reduce-add TileLang emits needs a target with TMA (sm_90)
and a shared layout a TensorMap descriptor can encode (none of its swizzles fits the swizzled layout of a 64-bit
tile); what it refuses is refused here at the call. What passes is lowered element by element (tileops.py), the
same sums: no bulk reduction is emitted yet.
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.visitor import walk
from ...target import TMA, parse_target
from .common import LoweringError, nbytes


def check_tma_atomics(func: N.PrimFunc, arch: str) -> None:
    """Raise tma-atomic-unsupported at the first TMA atomic add `arch` or its source's layout cannot take."""
    adds = [n for n in walk(func.body) if isinstance(n, N.AtomicAdd) and n.use_tma]
    if not adds:
        return
    if not parse_target(arch).has(TMA):
        raise LoweringError(f"TMA atomic add requires a CUDA target with TMA support (SM90+), not {arch}: compile for "
                            "sm_90a, or drop use_tma=True to add element by element", adds[0].span,
                            "tma-atomic-unsupported")
    swizzled = {b for n in walk(func.body) if isinstance(n, N.AnnotateLayout)
                for b, spec in n.entries if spec.kind == "swizzled"}
    for add in adds:
        tile = add.value.buffer
        if tile in swizzled and nbytes(tile.dtype) == 8:
            raise LoweringError(f"TMA atomic add cannot encode the shared layout of `{tile.name}` ({tile.dtype}): a "
                                "swizzled layout of 8-byte elements is not representable by a TensorMap descriptor; "
                                "drop the T.annotate_layout of the tile (it is then laid out linearly) or use_tma=True",
                                add.span, "tma-atomic-unsupported")
