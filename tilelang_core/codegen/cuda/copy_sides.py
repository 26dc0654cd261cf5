"""The operands of a tile copy as `Side`s (buffer, axis starts and extents, which axes carry the tile) and the
matching of two sides' tile extents: what T.copy, the TMA loads and stores, scans and the other tile ops share."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from .common import LoweringError


class Side:
    """One operand of a copy: buffer, axis starts/extents and which axes carry the tile."""

    def __init__(self, region: N.Region, other: N.Region | None = None):
        self.region, self.buf = region, region.buffer
        axes = list(region.axes)
        if not axes:
            axes = [N.Axis(N.Const(0), d, True) for d in self.buf.shape]
        if region.kind == "point" and other is not None:
            tile = [a.extent for a in _tile_axes(other)]
            k = len(tile)
            axes = axes[:-k] + [N.Axis(a.start, ext, True) for a, ext in zip(axes[-k:], tile)] if k else axes
            axes = [a if i >= len(axes) - k else N.Axis(a.start, N.Const(1), False) for i, a in enumerate(axes)]
        self.axes = axes

    @property
    def tile(self) -> list:
        """The axes that carry the tile, in order."""
        return [a for a in self.axes if a.sliced]


def _tile_axes(region: N.Region) -> list:
    """The sliced axes of a region (every dim of a whole buffer)."""
    axes = list(region.axes) or [N.Axis(N.Const(0), d, True) for d in region.buffer.shape]
    return [a for a in axes if a.sliced]


def match_tiles(src: Side, dst: Side, span) -> list:
    """The common tile extents of two sides; where their tile ranks differ, the unit axes are dropped (from the
    sides' axes too). LoweringError when the ranks or constant extents still differ."""
    a, b = src.tile, dst.tile
    if len(a) != len(b):
        a2 = [x for x in a if as_int(x.extent) != 1]
        b2 = [x for x in b if as_int(x.extent) != 1]
        if len(a2) != len(b2):
            raise LoweringError("T.copy operands have different tile ranks; slice both sides to the same shape", span)
        for side, keep in ((src, a2), (dst, b2)):
            side.axes = [x if (not x.sliced or x in keep) else N.Axis(x.start, x.extent, False) for x in side.axes]
        a, b = a2, b2
    for x, y in zip(a, b):
        ex, ey = as_int(x.extent), as_int(y.extent)
        if ex is not None and ey is not None and ex != ey:
            raise LoweringError(f"T.copy extents differ ({ex} vs {ey}); both sides must have the same tile shape", span)
    return [x.extent if as_int(x.extent) is not None else y.extent for x, y in zip(a, b)]
