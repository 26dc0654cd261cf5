"""Legalize: make every tile-op region explicit (head-address copies get the other side's extents).

Before: `T.copy(A[by * 128, ko * 32], A_shared)`  (a point region: the extent comes from A_shared)
After:  `T.copy(A[by * 128:by * 128 + 128, ko * 32:ko * 32 + 32], A_shared)`
"""
from __future__ import annotations

import dataclasses

from ..ir import nodes as N
from ..ir.visitor import transform


def _explicit(point: N.Region, other: N.Region) -> N.Region:
    tile = [a for a in (other.axes or ()) if a.sliced] or [N.Axis(N.Const(0), d, True) for d in other.buffer.shape]
    axes = list(point.axes)
    k = min(len(tile), len(axes))
    head = [N.Axis(a.start, N.Const(1), False) for a in axes[: len(axes) - k]]
    tail = [N.Axis(a.start, t.extent, True) for a, t in zip(axes[len(axes) - k:], tile[len(tile) - k:])]
    return dataclasses.replace(point, axes=tuple(head + tail), kind="slice")


def legalize(func: N.PrimFunc) -> N.PrimFunc:
    """Return `func` with head-address copy operands turned into explicit slices."""
    def fn(node):
        if isinstance(node, N.Copy):
            if node.src.kind == "point" and node.dst.kind != "point":
                return dataclasses.replace(node, src=_explicit(node.src, node.dst))
            if node.dst.kind == "point" and node.src.kind != "point":
                return dataclasses.replace(node, dst=_explicit(node.dst, node.src))
        return node
    body = transform(func.body, fn)
    if body is func.body:
        return func
    return dataclasses.replace(func, body=body)
