"""Reduction and scan rules: `dim` inside the input's rank, and the output shape of the reduced input."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from ..infer import dims_str, region_extents, same_expr
from ..walker import Ctx, rule
from .common import related_for, scope_name


def _dim_ok(op, rank: int, written: int, ctx: Ctx, name: str) -> bool:
    if -rank <= written < rank:
        return True
    ctx.emit("reduce-dim-out-of-range",
             f"{name} dim={written} but {op.src.buffer.name} has {rank} dimension(s); use dim in "
             f"[{-rank}, {rank}) (dim={rank - 1} or -1 is the last axis)",
             op.span, related=related_for(op.src.buffer))
    return False


_SHARED, _FRAG = ("shared", "shared.dyn"), ("local.fragment",)
# (input scopes, output scopes) pairs that tilelang/language/reduce_op.py accepts
_SCOPE_PAIRS = ((("local",), ("local", "local.var")), (_SHARED, _SHARED), (_SHARED, _FRAG), (_FRAG, _SHARED),
                (_FRAG, _FRAG))


def _scopes_ok(r: N.Reduce, ctx: Ctx, name: str) -> bool:
    s, d = r.src.buffer.scope, r.dst.buffer.scope
    if any(s in a and d in b for a, b in _SCOPE_PAIRS):
        return True
    ctx.emit("reduce-scope",
             f"{name} cannot reduce {r.src.buffer.name} ({scope_name(s)}) into {r.dst.buffer.name} "
             f"({scope_name(d)}); reduce between fragments or shared tiles (or local into local): copy the "
             f"input into a T.alloc_fragment tile first", r.span, related=related_for(r.src.buffer, r.dst.buffer))
    return False


@rule(N.Reduce)
def check_reduce(r: N.Reduce, ctx: Ctx) -> None:
    """T.reduce_*: scopes, dim in range; output = input without dim (or with dim kept as 1)."""
    src, dst = region_extents(r.src), region_extents(r.dst)
    if not _scopes_ok(r, ctx, f"T.reduce_{r.op}"):
        return
    name = f"T.reduce_{r.op}"
    written = r.dim if r.dim_written == -1 and 0 <= r.dim < len(src) else r.dim_written
    if not _dim_ok(r, len(src), written, ctx, name):
        return
    d = written % len(src)
    dropped = src[:d] + src[d + 1:]
    kept = src[:d] + (N.Const(1),) + src[d + 1:]
    if _matches(dst, dropped) or _matches(dst, kept) or _matches(dst, (N.Const(1),)) and not dropped:
        return
    if _unknown(dst, dropped) and _unknown(dst, kept):
        return
    ctx.emit("reduce-shape-mismatch",
             f"{name} over dim {written} of {r.src.buffer.name} ({dims_str(src)}) gives {dims_str(dropped) or '1'}, "
             f"but {r.dst.buffer.name} is {dims_str(dst)}; allocate {r.dst.buffer.name} as "
             f"({', '.join(str(as_int(d)) if as_int(d) is not None else '...' for d in dropped) or '1'},)",
             r.span, related=related_for(r.src.buffer, r.dst.buffer))


def _matches(a, b) -> bool:
    return len(a) == len(b) and all(same_expr(x, y) is True for x, y in zip(a, b))


def _unknown(a, b) -> bool:
    """True when the shapes cannot be told apart (same rank, no provably different dimension)."""
    return len(a) == len(b) and all(same_expr(x, y) is not False for x, y in zip(a, b)) and not _matches(a, b)


@rule(N.CumSum)
def check_cumsum(c: N.CumSum, ctx: Ctx) -> None:
    """T.cumsum / T.cummax: dim in range; dst has src's shape."""
    src, dst = region_extents(c.src), region_extents(c.dst)
    if not _dim_ok(c, len(src), c.dim, ctx, f"T.cum{c.op}"):
        return
    if len(src) == len(dst) and all(same_expr(x, y) is not False for x, y in zip(src, dst)):
        return
    ctx.emit("reduce-shape-mismatch",
             f"T.cum{c.op} writes {c.dst.buffer.name} ({dims_str(dst)}) from {c.src.buffer.name} ({dims_str(src)}); "
             f"a scan keeps the shape: allocate {c.dst.buffer.name} with the shape of {c.src.buffer.name}",
             c.span, related=related_for(c.src.buffer, c.dst.buffer))
