"""Reduction-axis coverage: a loop that feeds T.gemm (or T.reduce_* with clear=False) tiles copied from global
memory, whose copy offset along the reduced axis K moves by a different amount per step than the tile holds along
K, so part of K is skipped or summed twice."""
from __future__ import annotations

from ...diagnostics import Related
from ...ir import nodes as N
from ...ir.arith import as_int
from ..bounds import Interval, bound, mentions
from ..fastwalk import walk
from ..walker import Ctx, kernel_rule
from .accesses import Access, has_load, launches, root, start_of
from .common import related_for


@kernel_rule
def check_reduction_axis(func: N.PrimFunc, ctx: Ctx) -> None:
    """Each global→tile copy feeding a T.gemm operand inside a loop: K offset step == K tile extent."""
    for acc in launches(func):
        _launch(acc, ctx)


def _launch(acc, ctx: Ctx) -> None:
    copies = [a for a in acc.items if isinstance(a.op, N.Copy) and a.mode == "write" and a.axes is not None]
    groups: dict = {}  # (K loop, accumulator, operand, source tensor) -> {offset: (step, K extent, copy)}
    for g, operand, k_axis, accumulator, role in _reductions(acc):
        tile = root(operand.buffer)
        for c in copies:
            if root(c.buffer) is tile and c.source is not None and c.source.buffer.scope == "global":
                found = _step(c, k_axis, g)
                if found is not None:
                    loop, step, want, offset = found
                    key = (loop, root(accumulator), role, root(c.source.buffer))
                    groups.setdefault(key, {}).setdefault(offset, (step, want, c))
    # tiles of one tensor at different offsets that feed one accumulator share a step (ping-pong buffers)
    for (loop, _, _, _), tiles in groups.items():
        steps = {step for step, _, _ in tiles.values()}
        total = sum(want for _, want, _ in tiles.values())
        if len(steps) == 1 and total != next(iter(steps)):
            step, want, c = next(iter(tiles.values()))
            _report(c, loop, step, total, want, ctx)


def _reductions(acc):
    """(access, operand tile, its reduced axis, accumulator, operand role) for each T.gemm operand and each
    T.reduce_*(clear=False) input: the tiles whose reduced axis a loop around them walks."""
    for g in acc.items:
        if g.mode != "read":
            continue
        if isinstance(g.op, N.Gemm):
            for role, (operand, k_axis) in enumerate(_k_axes(g.op)):
                if operand.buffer is g.buffer and operand.kind == "full" and k_axis is not None:
                    yield g, operand, k_axis, g.op.c.buffer, role
        elif isinstance(g.op, N.Reduce) and not g.op.clear and g.op.src.kind == "full":
            yield g, g.op.src, g.op.dim, g.op.dst.buffer, 2


def _k_axes(g: N.Gemm):
    """(operand region, index of its K axis) for A and B."""
    for r, k_last in ((g.a, not g.transpose_a), (g.b, g.transpose_b)):
        n = len(r.buffer.shape)
        yield r, (n - 1 if k_last else n - 2) if n >= 2 else None


def _shared_loop(c: Access, g: Access) -> bool:
    return any(any(f is h for h in g.loops) for f in c.loops)


def _src_axis(c: Access, k_axis: int) -> int | None:
    """The source axis of the copy that lands on the tile's K axis (non-1 extents pair up in order)."""
    dst = [i for i, (_, e) in enumerate(c.axes) if as_int(e) != 1]
    src = [i for i, (_, e) in enumerate(c.source.axes) if as_int(e) != 1]
    if k_axis not in dst or len(src) != len(dst):
        return None
    return src[dst.index(k_axis)]


def _step(c: Access, k_axis: int, g: Access):
    """(the loop around both the copy and the gemm that walks K, the offset's step per iteration, the K extent a
    step of that loop loads) or None when the copy's K offset is not an affine function of such a loop."""
    src = c.source
    if src.axes is None or not _shared_loop(c, g):
        return None
    axis = _src_axis(c, k_axis)
    if axis is None:
        return None
    extent = as_int(c.axes[k_axis][1])
    start = start_of(src, axis)
    if extent is None or has_load(start):
        return None
    want = extent
    for f in reversed(c.loops):
        if not isinstance(f, N.For) or not any(mentions(start, {v}) for v in f.vars):
            continue
        if f.kind == "parallel" or len(f.vars) != 1:
            return None
        step = _stride(start, f.vars[0], f)
        if not step:
            return None  # not affine in the loop variable, or the offset does not move with it
        if any(f is h for h in g.loops):
            at0 = bound(start, {**_free_env(start, None), f.vars[0]: Interval.point(0)})
            return f, abs(step), want, (at0.lo if at0 is not None else None)
        trips = as_int(f.extents[0])
        if abs(step) != want or trips is None:
            return None
        want = abs(step) * trips
    return None


def _stride(start, v, f: N.For) -> int | None:
    """How far `start` moves when the loop advances one step (None when not affine in the loop variable)."""
    step = as_int(f.step) if f.step is not None else 1
    if step is None:
        return None
    env = _free_env(start, v)
    if env is None:
        return None
    vals = [bound(start, {**env, v: Interval.point(x)}) for x in (0, 1, 2)]
    if any(iv is None or iv.lo != iv.hi for iv in vals):
        return None
    d1, d2 = vals[1].lo - vals[0].lo, vals[2].lo - vals[1].lo
    return d1 * step if d1 == d2 else None


def _free_env(start, v) -> dict | None:
    """Every other variable of `start` pinned to 0, so only `v` moves (None for loads)."""
    env = {}
    for n in walk(start):
        if isinstance(n, N.Load):
            return None
        if isinstance(n, N.Var) and n is not v:
            env[n] = Interval.point(0)
    return env


def _report(c: Access, f: N.For, step: int, want: int, extent: int, ctx) -> None:
    v, gbuf, tile = f.vars[0], c.source.buffer.name, root(c.buffer)
    if step > want:
        effect = f"so {step - want} of every {step} elements of K are never read (the result misses part of the sum)"
    else:
        effect = f"so consecutive steps overlap by {want - step} elements of K, which are summed twice"
    fix = (f"step the offset by the tile's K extent ({v.name} * {extent}) and loop T.ceildiv(K, {extent}) times"
           if want == extent else f"step the offset by {want} per iteration of {v.name}")
    related = (Related(f.span, f"the loop over {v.name}"),) if f.span else ()
    ctx.emit("reduction-axis-step",
             f"each step of {v.name} moves the K offset of {gbuf} by {step}, but the tiles it reduces (T.gemm, "
             f"T.reduce_*) hold {want} elements of K per step ({tile.name} is {extent} wide along K), {effect}; {fix}",
             c.source.span or c.span, related=related + related_for(tile))
