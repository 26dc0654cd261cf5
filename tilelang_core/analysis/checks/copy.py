"""T.copy rules: extents of both sides (slices, head-address form, size-1 axes), whole-buffer shapes,
lossy dtype conversions, packed fp4 copied into unpacked fp4, and slices of shared/fragment tiles that leave the tile."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.copy_extent import loop_extents, loop_follows_source
from ...ir.printer import expr_str
from ..infer import canonical_dtype, dims_str, dtype_bits, is_float, is_int, non_unit, region_extents, same_expr
from ..walker import Ctx, rule
from .common import describe, related_for
from .indexing import check_region_bounds


@rule(N.Copy)
def check_copy(c: N.Copy, ctx: Ctx) -> None:
    """All T.copy checks for one call."""
    _dtype(c, ctx)
    if c.src.kind == "full" and c.dst.kind == "full":
        _whole_shapes(c, ctx)
        return
    if c.src.kind == "point" and c.dst.kind == "point":
        return  # an element-wise scalar copy
    src_ext, dst_ext = region_extents(c.src), region_extents(c.dst)
    legal = legalize(src_ext, dst_ext)
    if legal == "unknown":
        return
    if legal is not None and not isinstance(legal[0], list):
        legal = _differing(c, src_ext, dst_ext, legal, ctx)
        if legal is None:
            return
    if legal is None:
        _report_extents(c, src_ext, dst_ext, None, ctx)
        return
    for r, ext in ((c.src, legal[0]), (c.dst, legal[1])):
        check_region_bounds(r, ext, ctx, c.span)


def _differing(c: N.Copy, src_ext, dst_ext, pair, ctx: Ctx):
    """Sides whose paired extents provably differ: TileLang loops over one side's (ir/copy_extent.py). When it
    refuses, copy-extent-mismatch (None); else a copy-extent-differs warning and the extents each side then covers
    from its start (for the bounds check)."""
    a, b = non_unit(src_ext), non_unit(dst_ext)
    known = [as_int(x) for x in a], [as_int(y) for y in b]
    loop = loop_extents(*known, c.src.buffer.scope, c.dst.buffer.scope) if len(a) == len(b) else None
    if loop is None:
        _report_extents(c, src_ext, dst_ext, pair, ctx)
        return None
    follow_src = loop_follows_source(c.src.buffer.scope, c.dst.buffer.scope)
    base, other = (c.src, c.dst) if follow_src else (c.dst, c.src)
    other_ext = dst_ext if follow_src else src_ext
    fewer = any(n is not None and o is not None and n < o for n, o in zip(loop, known[1 if follow_src else 0]))
    word = "slice" if other.kind == "slice" else "region"
    effect = (f"part of the {word} of {other.buffer.name} is not written" if follow_src and fewer else
              f"{other.buffer.name} is {'written' if follow_src else 'read'} beyond its {word}")
    ctx.emit("copy-extent-differs",
             f"T.copy extents differ: {_side(c.src, src_ext)} but {_side(c.dst, dst_ext)}; TileLang loops over "
             f"{base.buffer.name}'s {dims_str(non_unit(_covering(other_ext, loop)))}"
             f" (the side in the more local memory, the source on a tie), so {effect}; make both sides cover the "
             "same extents", c.span, related=related_for(c.src.buffer, c.dst.buffer))
    return _covering(src_ext, loop), _covering(dst_ext, loop)


def _covering(ext, loop) -> list:
    """`ext` with its non-1 extents replaced by the loop's (where known)."""
    it = iter(loop)
    out = []
    for e in ext:
        if as_int(e) == 1:
            out.append(e)
            continue
        n = next(it)
        out.append(N.Const(n) if n is not None else e)
    return out



def legalize(src_ext, dst_ext):
    """Pair copy extents the way TileLang does (size-1 axes, head addresses).

    Returns the legal [src], [dst] extent lists; an (x, y) pair of extents that provably differ; None when
    the non-1 extents cannot be paired; or "unknown". Equal counts of non-1 extents pair up in order;
    otherwise both lists are right-aligned and a 1 takes the other side's extent (so `A[i, j]` takes the
    tile's shape)."""
    a, b = non_unit(src_ext), non_unit(dst_ext)
    if len(a) == len(b):
        for x, y in zip(a, b):
            if same_expr(x, y) is False:
                return (x, y)
        return list(src_ext), list(dst_ext)
    src, dst = list(src_ext), list(dst_ext)
    for i in range(1, min(len(src), len(dst)) + 1):
        x, y = src[-i], dst[-i]
        if same_expr(x, y) is True:
            continue
        if as_int(x) == 1:
            src[-i] = y
        elif as_int(y) == 1:
            dst[-i] = x
        else:
            return (x, y) if same_expr(x, y) is False else "unknown"
    if len(non_unit(src)) != len(non_unit(dst)):
        return None if all(as_int(e) is not None for e in (*src, *dst)) else "unknown"
    return src, dst


def _whole_shapes(c: N.Copy, ctx: Ctx) -> None:
    a, b = c.src.buffer.shape, c.dst.buffer.shape
    if len(a) == len(b) and all(same_expr(x, y) is not False for x, y in zip(a, b)):
        return
    if len(a) != len(b) and any(as_int(d) is None for d in (*a, *b)):
        return
    ctx.emit("copy-shape-mismatch",
             f"T.copy between whole buffers of different shapes: {describe(c.src)} into {describe(c.dst)}; "
             f"copy a slice of matching shape (e.g. {c.src.buffer.name}[0:{expr_str(b[0]) if b else 1}, ...]) "
             f"or allocate both with the same shape",
             c.span, related=related_for(c.src.buffer, c.dst.buffer))


def _report_extents(c: N.Copy, src_ext, dst_ext, pair, ctx: Ctx) -> None:
    detail = f" ({expr_str(pair[0])} vs {expr_str(pair[1])})" if pair else ""
    src = _side(c.src, src_ext)
    dst = _side(c.dst, dst_ext)
    tile, ext = (c.dst, dst_ext) if c.dst.kind == "full" or c.src.kind != "full" else (c.src, src_ext)
    other = c.src if tile is c.dst else c.dst
    ctx.emit("copy-extent-mismatch",
             f"T.copy extents differ: {src} but {dst}{detail}; T.copy does not broadcast: make the "
             f"{'slice' if other.kind == 'slice' else 'region'} of {other.buffer.name} cover exactly "
             f"{tile.buffer.name}'s {dims_str(non_unit(ext)) or '1'}",
             c.span, related=related_for(c.src.buffer, c.dst.buffer))


def _side(r: N.Region, ext) -> str:
    if r.kind == "full":
        return f"{r.buffer.name} is {dims_str(ext)}"
    if r.kind == "point":
        return f"the head address into {r.buffer.name} covers {dims_str(ext)}"
    return f"the slice of {r.buffer.name} is {dims_str(ext)}"


def _dtype(c: N.Copy, ctx: Ctx) -> None:
    s, d = canonical_dtype(c.src.buffer.dtype), canonical_dtype(c.dst.buffer.dtype)
    if s == d:
        return
    if s == "float4_e2m1fn" and d == "float4_e2m1_unpacked" and not c.tma:
        ctx.emit("fp4-unpacking-copy",
                 f"T.copy from {c.src.buffer.name} to {c.dst.buffer.name} is a SIMT copy from packed "
                 f"{c.src.buffer.scope} float4_e2m1fn to float4_e2m1_unpacked, which cannot unpack (only Blackwell's "
                 "TMA loads do, and no tilelang_core target has them); copy into a float4_e2m1fn tile, or convert "
                 "each element with T.cast in a T.Parallel loop",
                 c.span, related=related_for(c.src.buffer, c.dst.buffer))
        return
    lossy = None
    if is_float(s) and (is_int(d) or d == "bool"):
        lossy = "drops the fraction and saturates/wraps out-of-range values"
    elif is_int(s) and is_int(d):
        sb, db = dtype_bits(s), dtype_bits(d)
        if sb is not None and db is not None and db < sb:
            lossy = "wraps values that do not fit"
    if lossy:
        ctx.emit("copy-dtype-mismatch",
                 f"T.copy converts {c.src.buffer.name} ({s}) to {c.dst.buffer.name} ({d}), which {lossy}; "
                 f"if that is intended, convert explicitly with T.cast inside a T.Parallel loop",
                 c.span, related=related_for(c.src.buffer, c.dst.buffer))
