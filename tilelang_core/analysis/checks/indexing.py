"""Index rules: element accesses and tile-op slices of shared, fragment and local buffers that can leave
the buffer (interval arithmetic over loop, block and let ranges), and T.alloc_local indexed by T.Parallel."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.printer import expr_str
from ..bounds import bound, mentions
from ..fastwalk import walk
from ..infer import TILE_SCOPES, region_extents, region_starts, runtime_kinds
from ..walker import Ctx, access_rule, rule
from .common import related_for


def _range_text(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"{lo}..{hi}"


@access_rule
def check_index_bounds(buf: N.Buffer, indices, span, ctx: Ctx) -> None:
    """An element access buf[i, j] whose index range leaves a shared/fragment/local buffer."""
    if buf.scope not in TILE_SCOPES or len(indices) != len(buf.shape):
        return
    for axis, (idx, dim) in enumerate(zip(indices, buf.shape)):
        n = as_int(dim)
        iv = bound(idx, ctx.env) if n is not None else None
        if iv is None:
            continue
        if iv.hi < 0 and iv.lo >= -n:
            continue  # a negative constant index counts from the end, as in Python
        if 0 <= iv.lo and iv.hi < n:
            continue
        where = f" in its {_ordinal(axis + 1)} dimension" if len(buf.shape) > 1 else ""
        ctx.emit("index-out-of-bounds",
                 f"index {expr_str(idx)} of {buf.name}{where} ranges over {_range_text(iv.lo, iv.hi)} but "
                 f"{buf.name} has {n} elements there (valid 0..{n - 1}); fix the index or the loop range",
                 _index_span(idx, span), related=related_for(buf))
        return


def _index_span(idx, access_span):
    """The index expression's own span when it has one (a bare Var's span is its declaration)."""
    own = getattr(idx, "span", None)
    if own is None or isinstance(idx, N.Var) or access_span is None or not access_span.covers(own):
        return access_span
    return own


def check_region_bounds(region: N.Region, extents, ctx: Ctx, op_span) -> None:
    """A tile-op slice (start + extent) that leaves a shared/fragment/local buffer."""
    buf = region.buffer
    if buf.scope not in TILE_SCOPES or region.kind == "full" or len(extents) != len(buf.shape):
        return
    for axis, (start, ext, dim) in enumerate(zip(region_starts(region), extents, buf.shape)):
        n, e = as_int(dim), as_int(ext)
        iv = bound(start, ctx.env) if n is not None and e is not None else None
        if iv is None or (iv.lo >= 0 and iv.hi + e <= n):
            continue
        cover = f"[{iv.lo}, {iv.hi + e})" if iv.lo == iv.hi else f"up to [{iv.lo}, {iv.hi + e})"
        ctx.emit("index-out-of-bounds",
                 f"this region of {buf.name} covers {cover} in its {_ordinal(axis + 1)} dimension, but {buf.name} has {n} "
                 f"elements there (valid [0, {n})); keep the slice inside the tile",
                 region.span or op_span, related=related_for(buf))
        return


def _region_rule(node, ctx: Ctx) -> None:
    for r in _regions(node):
        if r.kind == "slice":
            check_region_bounds(r, region_extents(r), ctx, node.span)


def _regions(node):
    for f in ("src", "dst", "a", "b", "c", "value"):
        r = getattr(node, f, None)
        if isinstance(r, N.Region):
            yield r


rule(N.Gemm, N.Fill, N.Reduce, N.CumSum, N.AtomicAdd)(_region_rule)


@access_rule
def check_local_parallel(buf: N.Buffer, indices, span, ctx: Ctx) -> None:
    """A T.alloc_local buffer indexed by a T.Parallel loop variable (each thread holds its own copy)."""
    if buf.scope != "local" or not ctx.parallel:
        return
    pvars = ctx.parallel_vars
    for idx in indices:
        if mentions(idx, pvars):
            var = next(v for v in pvars if mentions(idx, {v}))
            ctx.emit("local-indexed-by-parallel",
                     f"{buf.name} is a T.alloc_local buffer (private to each thread) but is indexed by the "
                     f"T.Parallel variable {var.name}; allocate it with T.alloc_fragment, or loop with "
                     f"T.serial/T.unroll instead",
                     _index_span(idx, span), related=related_for(buf))
            return


def _runtime(e, kinds) -> bool:
    """True when an expression is only known at run time (block/loop vars, T.dynamic dims, loads); lets and
    unknown factory values may be compile-time constants in TileLang, so they do not count."""
    if as_int(e) is not None:
        return False
    return any(isinstance(n, N.Load) or isinstance(n, N.Var) and n.kind in kinds for n in walk(e))


@access_rule
def check_fragment_dynamic_parallel(buf: N.Buffer, indices, span, ctx: Ctx) -> None:
    """A fragment indexed by the variable of a T.Parallel loop whose start or extent is a run-time value."""
    if buf.scope != "local.fragment" or not ctx.parallel:
        return
    kinds = runtime_kinds(ctx.func)
    for loop in ctx.parallel:
        bad = [(v, st, ext) for v, st, ext in zip(loop.vars, loop.starts, loop.extents)
               if (_runtime(st, kinds) or _runtime(ext, kinds)) and any(mentions(i, {v}) for i in indices)]
        if bad:
            v, st, ext = bad[0]
            msg = (f"fragment {buf.name} is indexed by {v.name}, whose loop {_loop_text(st, ext)} has a range only "
                   f"known at run time; fragments need a constant T.Parallel range: loop over the whole tile and "
                   f"guard the tail with `if`")
            if not any(d.code == "fragment-parallel-dynamic" and d.message == msg and d.span.line == span.line
                       for d in ctx.sink.items):  # `F[i] = F[i] * 2`: once per line, not per access
                ctx.emit("fragment-parallel-dynamic", msg, span, related=related_for(buf))
            return


def _loop_text(start, extent) -> str:
    if as_int(start) == 0:
        return f"T.Parallel({expr_str(extent)})"
    return f"T.Parallel({expr_str(start)}, {expr_str(start)} + {expr_str(extent)})"


def _ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th...: dimensions counted for people (`dim=` arguments are 0-based, so no bare numbers)."""
    return f"{n}{ {1: 'st', 2: 'nd', 3: 'rd'}.get(n if n < 20 else n % 10, 'th')}"
