"""Reduction and scan rules: `dim` inside the input's rank, and the output shape of the reduced input."""
from __future__ import annotations

import itertools
import math

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.visitor import walk
from ..infer import dims_str, region_extents, same_expr
from ..resources import block_threads
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


_INFERRED = "inferred"
_MAX_ENUMERATED = 1 << 16  # larger tiles are not enumerated thread by thread


def _src_layout(buf: N.Buffer, launch: N.Launch):
    """_INFERRED (element e in thread e % T), the annotated fragment's LayoutSpec with its thread map, or None
    (a gemm accumulator, or a layout we cannot see into)."""
    for n in walk(launch.body):
        if isinstance(n, N.Gemm) and n.c.buffer is buf:
            return None
        if isinstance(n, N.AnnotateLayout):
            spec = next((sp for b, sp in n.entries if b is buf), None)
            if spec is not None:
                return spec if spec.kind == "fragment" and spec.threads is not None else None
    return _INFERRED


def _row_threads(shape, dim: int, thread_of) -> list[set]:
    """For each output of a reduction over `dim`, the set of threads holding its inputs."""
    strides = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    kept = [k for k in range(len(shape)) if k != dim]
    rows = []
    for idx in itertools.product(*(range(shape[k]) for k in kept)):
        base = sum(i * strides[k] for k, i in zip(kept, idx))
        rows.append({thread_of(base + r * strides[dim]) for r in range(shape[dim])})
    return rows


@rule(N.Reduce)
def check_reduce_width(r: N.Reduce, ctx: Ctx) -> None:
    """A cross-thread reduction of a fragment combines, per output, a power-of-two number of threads (TileLang's
    logical_width: its butterfly of warp shuffles needs it), all outputs together one contiguous, warp-aligned
    range of threads. Checked for an annotated fragment whose thread map is known, and for the inferred layout
    (element e in thread e % T) in a block whose T is not a power of two (with a power-of-two T it always holds)."""
    threads = block_threads(ctx.launch) if ctx.launch is not None else None
    shape = [as_int(d) for d in r.src.buffer.shape]
    if r.src.buffer.scope != "local.fragment" or threads is None or None in shape or not 0 <= r.dim < len(shape) \
            or math.prod(shape) > _MAX_ENUMERATED:
        return
    layout = _src_layout(r.src.buffer, ctx.launch)
    if layout is None or layout is _INFERRED and threads & (threads - 1) == 0:
        return
    rows = _row_threads(shape, r.dim, (lambda e: e % threads) if layout is _INFERRED else layout.threads.__getitem__)
    if max(len(t) for t in rows) <= 1:
        return
    name = f"T.reduce_{r.op} over dim {r.dim_written if r.dim_written != -1 else r.dim} of {r.src.buffer.name}"
    every = sorted(set().union(*rows))
    odd = next((len(t) for t in rows if len(t) & (len(t) - 1)), None)
    if odd is not None:
        ctx.emit("reduce-thread-width", f"{name} ({dims_str(r.src.buffer.shape)}) combines {odd} threads per "
                 "output: its logical_width must be a positive power of two; lay the tile out (or size the block) "
                 "so each output gathers 2, 4, ..., 32, 64, ... threads", r.span, related=related_for(r.src.buffer))
    elif every[-1] - every[0] + 1 != len(every):
        ctx.emit("reduce-thread-width", f"{name}: its threads ({_ranges(every)}) are not one contiguous thread "
                 "range; lay the fragment out over adjacent threads", r.span, related=related_for(r.src.buffer))
    elif len(every) >= 32 and every[0] % 32:
        ctx.emit("reduce-thread-width", f"{name}: threads [{every[0]}, {every[-1] + 1}) are not a warp-aligned "
                 "participating thread range (the shuffles need whole warps); start the range at a multiple of 32",
                 r.span, related=related_for(r.src.buffer))


def _ranges(ts: list) -> str:
    """Sorted thread ids as half-open ranges: "[0, 64), [128, 192)"."""
    out, start = [], ts[0]
    for a, b in zip(ts, ts[1:] + [None]):
        if b != a + 1:
            out.append(f"[{start}, {a + 1})")
            start = b
    return ", ".join(out)


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
