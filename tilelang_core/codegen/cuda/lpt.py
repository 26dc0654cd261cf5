"""Longest blocks first: when the trip count of a kernel's top-level loop grows with one block index (causal
attention: query block bx runs about bx + 1 key blocks), the blocks start in decreasing order of that index, so the
longest ones do not start last and leave the GPU waiting on a tail (the longest-processing-time-first order of
FlashAttention-3's scheduler). Blocks are independent, so only the time changes.

Applies when the blocks share no state (no atomics, opaque calls or grid barrier, no tensor both read and written:
`persistent.coupling`, so no block waits for another), no `T.use_swizzle` already orders them, the block index's
grid extent is a constant, and the loop's trip count (top-level lets substituted) depends on that index alone,
never decreasing and not constant.
`TILELSP_HEAVY_FIRST=0` keeps the launch order.
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.visitor import transform, walk
from ...options import current_options
from .persistent import coupling
from .raster import swizzle_hint

MAX_CHECKED = 4096  # block extents up to this are checked value by value for a non-decreasing trip count


def heavy_index(launch: N.Launch):
    """(block index var, its grid extent) to launch in reverse, or None."""
    if not current_options().heavy_first:
        return None
    if swizzle_hint(launch) is not None:
        return None
    if coupling(launch) is not None:
        return None
    body = launch.body.stmts if isinstance(launch.body, N.SeqStmt) else (launch.body,)
    lets = {s.var: s.value for s in body if isinstance(s, N.LetStmt)}
    blocks = dict(zip(launch.block_vars, launch.grid))
    for loop in (s for s in body if isinstance(s, N.For)):
        extent = _substitute(loop.extents[0], lets)
        used = {n for n in walk(extent) if isinstance(n, N.Var)}
        if len(used) != 1 or not used <= set(blocks):
            continue
        v = used.pop()
        size = as_int(blocks[v])
        if size is None or not 1 < size <= MAX_CHECKED:
            continue
        trips = [as_int(_substitute(extent, {v: N.Const(k)})) for k in range(size)]
        if None not in trips and trips[-1] > trips[0] and all(a <= b for a, b in zip(trips, trips[1:])):
            return v, size
    return None


def _substitute(e, values: dict, depth: int = 8):
    """`e` with the variables in `values` replaced (values that mention others, a few levels deep)."""
    for _ in range(depth):
        new = transform(e, lambda n: values.get(n, n) if isinstance(n, N.Var) else n)
        if new is e:
            return e
        e = new
    return e


def reverse_heavy(em, launch: N.Launch) -> None:
    """Rebind the block index whose blocks run longer as it grows to run from the last block down."""
    found = heavy_index(launch)
    if found is not None:
        v, size = found
        name = em.fresh(f"{em.name(v)}_lpt")
        em.line(f"{name} = {size - 1} - {em.var_text.get(v, em.name(v))}")
        em.var_text[v] = name


def note(launch: N.Launch) -> str:
    """The layouts stage's line on the block order ("" when the launch order stays)."""
    found = heavy_index(launch)
    return "" if found is None else (f"\n# longest blocks first: {found[0].name} runs from {found[1] - 1} down "
                                     "(the loop's trip count grows with it)")
