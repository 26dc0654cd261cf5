"""T.use_swizzle: threadblock rasterisation. Consecutive blocks (in launch order) walk a panel of `panel_size` tile
rows (order "row") or columns ("column") before moving on, so the A and B tiles they share stay in L2."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.visitor import walk


def rasterize(em, launch: N.Launch) -> None:
    """Rebind the first two block indices of `launch` per its enabled T.use_swizzle (no-op without one)."""
    hint = next((n for n in walk(launch.body) if isinstance(n, N.UseSwizzle) and n.enable and n.panel_size > 1),
                None)
    if hint is None or len(launch.block_vars) < 2:
        return
    bx, by = launch.block_vars[:2]
    gx, gy = em.idx(launch.grid[0]), em.idx(launch.grid[1])
    lin = f"({em.name(by)} * {gx} + {em.name(bx)})"
    p = hint.panel_size
    # "row": panels of p tile rows (by), swept column by column; "column": panels of p tile columns (bx)
    along, across, n_along = (gy, gx, "y") if hint.order != "column" else (gx, gy, "x")
    width = f"({p} * {across})"
    first = f"(T.floordiv({lin}, {width}) * {p})"
    size = f"T.min({along} - {first}, {p})"
    local = f"T.floormod({lin}, {width})"
    new_along, new_across = f"({first} + T.floormod({local}, {size}))", f"T.floordiv({local}, {size})"
    rows, cols = (new_along, new_across) if n_along == "y" else (new_across, new_along)
    names = (em.fresh(f"{em.name(bx)}_r"), em.fresh(f"{em.name(by)}_r"))
    em.line(f"{names[0]} = {cols}")
    em.line(f"{names[1]} = {rows}")
    em.var_text[bx], em.var_text[by] = names
