"""T.use_swizzle: threadblock rasterisation. Consecutive blocks (in launch order) walk a panel of `panel_size` tile
rows (order "row") or columns ("column") before moving on, so the A and B tiles they share stay in L2."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.visitor import walk
from .common import local_ints


def rasterize(em, launch: N.Launch, tile: str | None = None) -> None:
    """Rebind the first two block indices of `launch` per its enabled T.use_swizzle (no-op without one). `tile`: the
    linear tile index (launch order) of a persistent kernel, from which every block index is rebound (in panels of
    its plan's default panel when the kernel has no T.use_swizzle)."""
    hint = swizzle_hint(launch)
    persistent = em.roles.ws.persistent if tile else None
    default = persistent.panel if persistent is not None else None
    if hint is None and default:  # a persistent kernel without T.use_swizzle: persistent.default_panel
        hint = N.UseSwizzle(default)
    bvs = launch.block_vars
    if tile is None and (hint is None or len(bvs) < 2):
        return
    gx = em.idx(launch.grid[0])
    if tile is None:
        bx, by = bvs[:2]
        gy = em.idx(launch.grid[1])
        lin = f"({em.name(by)} * {gx} + {em.name(bx)})"
    else:
        lin = _unravel_outer(em, launch, tile)
        if len(bvs) == 1:
            return
        bx, by = bvs[:2]
        gy = em.idx(launch.grid[1])
        if hint is None:
            _bind(em, bx, 0, f"T.floormod({lin}, {gx})")
            _bind(em, by, 1, f"T.floordiv({lin}, {gx})")
            return
    p = hint.panel_size
    # "row": panels of p tile rows (by), swept column by column; "column": panels of p tile columns (bx)
    along, across, n_along = (gy, gx, "y") if hint.order != "column" else (gx, gy, "x")
    width = f"({p} * {across})"
    first = f"(T.floordiv({lin}, {width}) * {p})"
    size = f"T.min({along} - {first}, {p})"
    local = f"T.floormod({lin}, {width})"
    new_along, new_across = f"({first} + T.floormod({local}, {size}))", f"T.floordiv({local}, {size})"
    rows, cols = (new_along, new_across) if n_along == "y" else (new_across, new_along)
    _bind(em, bx, 0, cols)
    _bind(em, by, 1, rows)


def swizzle_hint(launch: N.Launch):
    """The launch's enabled T.use_swizzle with a panel of more than one tile, or None."""
    return next((n for n in walk(launch.body) if isinstance(n, N.UseSwizzle) and n.enable and n.panel_size > 1),
                None)


def _bind(em, var, slot: int, value: str) -> None:
    """Rebind block index `var` to `value`, computed once into a local int32 array (`common.local_ints`): a let would
    be inlined into every use, and nvcc does not hoist its divisions out of a k-loop that waits on an mbarrier
    (inline asm), so a persistent producer recomputed its tile coordinates for every TMA load (H200 ncu: 44 % more
    instructions than cuBLAS at 4096^3)."""
    text = local_ints(em, "blk", 3)[slot]
    em.line(f"{text} = {value}")
    em.var_text[var] = text


def _unravel_outer(em, launch: N.Launch, tile: str) -> str:
    """Bind the third block index (and the only one, in a 1-D grid) from `tile`; the index within a z-slice."""
    bvs = launch.block_vars
    if len(bvs) == 1:
        name = em.fresh(f"{em.name(bvs[0])}_t")
        em.line(f"{name} = {tile}")
        em.var_text[bvs[0]] = name
        return name
    if len(bvs) < 3:
        return tile
    plane = f"({em.idx(launch.grid[0])} * {em.idx(launch.grid[1])})"
    _bind(em, bvs[2], 2, f"T.floordiv({tile}, {plane})")
    return f"T.floormod({tile}, {plane})"
