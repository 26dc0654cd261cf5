"""The loop of a T.copy whose two sides cover different extents, as TileLang builds it: over the extents of the side in
the more local memory (fragment or local over shared over global; the source on a tie), each side indexed from its
own start. TileLang refuses the copy when that side is the destination and is smaller than the source along a paired
axis (the loop would copy less than the source covers).

`T.copy(A[:, :2], B[:, :3])` (both global): the loop follows A, so B[:, :2] = A[:, :2] and B[:, 2] is not written.
`T.copy(A[0:128, 0:64], S)` with S a 128x32 shared tile: the loop would follow S and copy 32 of the 64 columns: refused.
"""
from __future__ import annotations

_LEVELS = {"local.fragment": 2, "local": 2, "local.var": 2, "shared": 1, "shared.dyn": 1, "shared.tmem": 1}


def loop_follows_source(src_scope: str, dst_scope: str) -> bool:
    """Whether the copy's loop runs over the source's extents (else the destination's)."""
    return _LEVELS.get(src_scope, 0) >= _LEVELS.get(dst_scope, 0)


def loop_extents(src: list, dst: list, src_scope: str, dst_scope: str) -> list | None:
    """The loop extent of each pair of tile axes (`src[k]` with `dst[k]`: an int when known, anything else when
    symbolic, which the other side's known extent replaces), or None when TileLang refuses the copy."""
    follow_src = loop_follows_source(src_scope, dst_scope)
    out = []
    for a, b in zip(src, dst):
        if _known(a) and _known(b) and a != b:
            if not follow_src and b < a:
                return None
            out.append(a if follow_src else b)
        else:
            out.append(b if _known(b) else a)
    return out


def _known(e) -> bool:
    return isinstance(e, int) and not isinstance(e, bool)
