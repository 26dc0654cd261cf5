"""Output coverage: the union over the grid of what each block writes to an output tensor, against the tensor's
shape. Each write is projected on each axis (an over-approximation: guards are ignored, loop ranges widened), so
an index outside every projection is certainly never written. Symbolic sizes or indices read from memory make
an axis unknown, and nothing is reported for it."""
from __future__ import annotations

from ...diagnostics import Related, Severity
from ...ir import nodes as N
from ...ir.arith import as_int
from ..bounds import Interval, bound, mentions
from ..walker import Ctx, kernel_rule
from .accesses import Access, access_env, grid_env, has_load, launches, out_params, root, start_of
from .common import related_for

_ENUMERATE = 256  # most block-index combinations enumerated for one axis of one write


@kernel_rule
def check_output_coverage(func: N.PrimFunc, ctx: Ctx) -> None:
    """Rows/columns of an output that no block writes, and tiles that start entirely outside the tensor."""
    per_launch = launches(func)
    by_tensor: dict = {}
    read: set = set()
    for la in per_launch:
        for a in la.items:
            r = root(a.buffer)
            if r.scope != "global":
                continue
            if a.mode in ("read", "opaque", "accum") or a.buffer is not r:
                read.add(r)  # read, or reached through a view whose indices are not the tensor's own
            if a.mode in ("write", "atomic", "opaque"):
                by_tensor.setdefault(r, []).append((la.launch, a))
    out_idx = out_params(func)
    for tensor, writes in by_tensor.items():
        if tensor in read:
            continue  # updated in place (partial writes may be intended), or written through a view
        _tensor(tensor, writes, tensor in out_idx, ctx)


def _tensor(tensor: N.Buffer, writes, fresh: bool, ctx: Ctx) -> None:
    dims = [as_int(d) for d in tensor.shape]
    outside_reported = False
    for axis, dim in enumerate(dims):
        if dim is None:
            continue
        covered: list = []
        for launch, a in writes:
            ivs = projection(launch, a, axis)
            if ivs is None:
                break
            covered.extend(ivs)
            if not outside_reported and not a.guards and ivs and max(iv.lo for iv in ivs) >= dim:
                outside_reported = True
                _report_outside(tensor, axis, dim, max(iv.lo for iv in ivs), launch, a, ctx)
        else:
            gap = _first_gap(covered, dim)
            walked = any(_walked(launch, a, axis) for launch, a in writes)
            if gap is not None and (fresh or walked):
                _report(tensor, axis, dim, gap, covered, writes, fresh, walked, ctx)
                return


def projection(launch: N.Launch, a: Access, axis: int) -> list | None:
    """Intervals of indices on `axis` that some block may write through access `a` (None: unknown)."""
    if a.axes is None or axis >= len(a.axes):
        return None
    start, ext = start_of(a, axis), as_int(a.axes[axis][1])
    if ext is None or has_load(start):
        return None
    grid = grid_env(launch)
    deps = [v for v in launch.block_vars if v in grid and (mentions(start, {v}) or _loops_mention(a, v))]
    count = 1
    for v in deps:
        count *= grid[v].hi + 1
    if count > _ENUMERATE:
        return _affine_projection(a, start, ext, deps, grid)
    out = []
    for values in _combinations([grid[v].hi + 1 for v in deps]):
        env = access_env(a, {**grid, **{v: Interval.point(x) for v, x in zip(deps, values)}})
        iv = bound(start, env) if env is not None else None
        if iv is None:
            return None
        out.append(Interval(iv.lo, iv.hi + ext - 1))
    return out


def _affine_projection(a: Access, start, ext: int, deps, grid) -> list | None:
    """One block index with a large extent, `start = s * b + rest`: contiguous when each step is covered."""
    if len(deps) != 1 or _loops_mention(a, deps[0]):
        return None
    b = deps[0]
    env = access_env(a, grid)
    if env is None:
        return None
    at0 = bound(start, {**env, b: Interval.point(0)})
    at1 = bound(start, {**env, b: Interval.point(1)})
    last = bound(start, {**env, b: Interval.point(grid[b].hi)})
    if at0 is None or at1 is None or last is None:
        return None
    step = at1.lo - at0.lo
    if step <= 0 or at1.hi - at0.hi != step or at0.hi + ext - 1 + 1 < at1.lo:
        return None  # not affine with an upward step, or gaps between blocks (not decided here)
    if last.lo != at0.lo + step * grid[b].hi:
        return None
    return [Interval(at0.lo, last.hi + ext - 1)]


def _walked(launch: N.Launch, a: Access, axis: int) -> bool:
    """True when the blocks walk this axis (its start moves with a block index): the grid is meant to cover it. A
    tensor passed in and written at fixed positions may be meant to be written in part."""
    start = start_of(a, axis)
    return any(mentions(start, {v}) or _loops_mention(a, v) for v in launch.block_vars)


def _loops_mention(a: Access, v) -> bool:
    return any(isinstance(f, N.For) and any(mentions(e, {v}) for e in (*f.starts, *f.extents)) for f in a.loops)


def _combinations(extents):
    if not extents:
        yield ()
        return
    for head in range(extents[0]):
        for rest in _combinations(extents[1:]):
            yield (head, *rest)


def _first_gap(ivs: list, dim: int) -> tuple[int, int] | None:
    """The first [lo, hi] range of 0..dim-1 that no interval covers, or None."""
    at = 0
    for iv in sorted(ivs, key=lambda i: i.lo):
        if iv.lo > at:
            return (at, min(iv.lo, dim) - 1)
        at = max(at, iv.hi + 1)
        if at >= dim:
            return None
    return (at, dim - 1) if at < dim else None


def _walker(a: Access, axis: int, grid: dict):
    """(block index, step between neighbouring blocks) of an axis whose start moves with one block index."""
    start = start_of(a, axis)
    deps = [v for v in grid if mentions(start, {v})]
    env = access_env(a, grid) if len(deps) == 1 else None
    if env is None:
        return None
    b = deps[0]
    at0, at1 = bound(start, {**env, b: Interval.point(0)}), bound(start, {**env, b: Interval.point(1)})
    if at0 is None or at1 is None or at1.lo - at0.lo <= 0:
        return None
    return b, at1.lo - at0.lo


def _swapped(tensor, axis: int, launch, a: Access):
    """(the block index on `axis`, the one on another axis) when exchanging the two would cover both dimensions."""
    grid = grid_env(launch)
    if a.axes is None or len(a.axes) != len(tensor.shape):
        return None
    here = _walker(a, axis, grid)
    if here is None:
        return None
    b, step = here
    for other_axis in range(len(a.axes)):
        there = _walker(a, other_axis, grid) if other_axis != axis else None
        dims = (as_int(tensor.shape[axis]), as_int(tensor.shape[other_axis]))
        if there is None or there[0] is b or None in dims:
            continue
        c, other_step = there
        if (grid[c].hi + 1) * step >= dims[0] and (grid[b].hi + 1) * other_step >= dims[1]:
            return b, c
    return None


def _report(tensor, axis: int, dim: int, gap, covered, writes, fresh: bool, walked: bool, ctx: Ctx) -> None:
    """An error for an out_idx output the blocks walk (the grid misses part of it); a warning for a tensor passed
    in, or for an output written at fixed positions (TileLang compiles it: the rest is left as allocated)."""
    lo, hi = gap
    what = {0: "rows", 1: "columns"}.get(axis, "indices") if len(tensor.shape) == 2 else "indices"
    where = f" along dimension {axis}" if len(tensor.shape) != 2 else ""
    reach = max(iv.hi for iv in covered) + 1 if covered else 0
    swapped = _swapped(tensor, axis, writes[0][0], writes[0][1])
    if not walked:
        why = "the kernel writes it at fixed positions only; write every element, or pass the tensor in"
    elif reach <= lo and swapped:
        b, other = swapped
        why = (f"the block indices look swapped: {b.name} indexes this dimension but T.Kernel sizes it for the "
               f"other one; index dimension {axis} with {other.name} and the other dimension with {b.name}")
    elif reach <= lo:
        why = (f"the blocks only reach {what} up to {reach - 1}: the grid is too small for the tensor (a grid "
               f"sized with `//` drops the tail; block indices swapped between T.Kernel and the indexing shrink "
               f"it too); size the grid with T.ceildiv(size, tile) and index each axis with its own block index")
    else:
        why = ("the tiles the blocks write leave gaps; make each block's tile as wide as the step between "
               "blocks")
    span_of = writes[0][1].span
    launch = writes[0][0]
    related = (Related(launch.span, "the grid is set here"),) if launch.span else ()
    ctx.emit("output-not-covered",
             f"{what} {lo}..{hi}{where} of {tensor.name} (size {dim}) are never written by any block, so they keep "
             f"{'whatever the fresh out_idx allocation held' if fresh else 'their old contents'}; {why}",
             span_of, related=related + related_for(tensor),
             severity=None if fresh and walked else Severity.WARNING)


def _report_outside(tensor, axis: int, dim: int, start: int, launch, a: Access, ctx: Ctx) -> None:
    related = (Related(launch.span, "the grid is set here"),) if launch.span else ()
    ctx.emit("tile-outside-tensor",
             f"some blocks write a tile of {tensor.name} that starts at index {start} of dimension {axis}, past its "
             f"end (size {dim}): those blocks write nothing, which usually means the grid is larger than the "
             f"tensor along this axis or the block indices are swapped between T.Kernel and the indexing; make "
             f"the grid extent T.ceildiv(size, tile) for the axis that block index walks",
             a.span, related=related + related_for(tensor))
