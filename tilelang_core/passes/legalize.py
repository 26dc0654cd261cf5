"""Legalize: make every tile-op region explicit (head-address copies get the other side's extents).

Before: `T.copy(A[by * 128, ko * 32], A_shared)`  (a point region: the extent comes from A_shared)
After:  `T.copy(A[by * 128:by * 128 + 128, ko * 32:ko * 32 + 32], A_shared)`
"""
from __future__ import annotations

import dataclasses

from ..frontend.regions import explicit_region
from ..ir import nodes as N
from ..ir.visitor import transform


def legalize(func: N.PrimFunc) -> N.PrimFunc:
    """Return `func` with head-address copy operands turned into explicit slices."""
    def fn(node):
        if isinstance(node, N.Copy):
            if node.src.kind == "point" and node.dst.kind != "point":
                return dataclasses.replace(node, src=explicit_region(node.src, node.dst))
            if node.dst.kind == "point" and node.src.kind != "point":
                return dataclasses.replace(node, dst=explicit_region(node.dst, node.src))
        return node
    body = transform(func.body, fn)
    if body is func.body:
        return func
    return dataclasses.replace(func, body=body)
