"""The operands of a tile copy as `Side`s (buffer, axis starts and extents, which axes carry the tile) and the
matching of two sides' tile extents: what T.copy, the TMA loads and stores, scans and the other tile ops share."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.copy_extent import loop_extents
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
    sides' axes too). Differing constant extents follow TileLang's rule (ir/copy_extent.loop_extents: the loop runs
    over the more local side's extents, each side from its own start); LoweringError where it refuses them."""
    a, b = src.tile, dst.tile
    if len(a) != len(b):
        a2 = [x for x in a if as_int(x.extent) != 1]
        b2 = [x for x in b if as_int(x.extent) != 1]
        if len(a2) != len(b2):
            raise LoweringError("T.copy operands have different tile ranks; slice both sides to the same shape", span)
        for side, keep in ((src, a2), (dst, b2)):
            side.axes = [x if (not x.sliced or x in keep) else N.Axis(x.start, x.extent, False) for x in side.axes]
        a, b = a2, b2
    ea, eb = [as_int(x.extent) for x in a], [as_int(y.extent) for y in b]
    loop = loop_extents(ea, eb, src.buf.scope, dst.buf.scope)  # differing extents: TileLang's rule (ir/copy_extent)
    if loop is None:
        raise LoweringError(f"T.copy extents differ ({_dims(ea)} into {_dims(eb)}): the destination tile is "
                            "smaller than the source; both sides must have the same tile shape", span)
    for side, axes in ((src, a), (dst, b)):  # each side covers the loop's extents from its own start
        wide = {id(x): N.Axis(x.start, N.Const(n), True) for x, n in zip(axes, loop) if n is not None
                and as_int(x.extent) not in (None, n)}
        side.axes = [wide.get(id(x), x) for x in side.axes]
    return [x.extent if as_int(x.extent) is not None else y.extent for x, y in zip(src.tile, dst.tile)]


def _dims(extents: list) -> str:
    return "x".join("?" if e is None else str(e) for e in extents)
