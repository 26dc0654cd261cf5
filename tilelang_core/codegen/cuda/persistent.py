"""Persistent tile loop for the warp-specialised (TMA) pipeline: the grid is chosen at launch (at most one wave of
resident blocks, `runtime.launch`), and each block walks tiles `blockIdx.x, blockIdx.x + gridDim.x, ...` in the
T.use_swizzle order; the mbarrier stage ring and its phases continue across tiles, so the producer warpgroup loads
the next tile's first stages while the consumers run the epilogue of the last.

A kernel qualifies when its blocks are independent and its consumers carry nothing from tile to tile but the ring:
no atomics, no grid barrier, no opaque calls (`T.call_extern`, `T.access_ptr`), no global tensor both read and
written, a k-loop trip count that does not depend on the block index, and no shared memory touched outside the
pipelined loop (a GEMM-shaped body: clear, pipelined gemm, epilogue from registers). `TILELSP_PERSISTENT=0` turns it
off, `=1` on (the default: on).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...ir import nodes as N
from ...ir.arith import as_int, shape_ints
from ...ir.printer import expr_str
from ...ir.visitor import op_regions, walk
from ...options import current_options
from .common import shared_rw, view_root
from .raster import rasterize

_OPAQUE = ("call_extern", "access_ptr", "sync_grid")


RESIDENT = 132  # an H100 / H200 SXM's SMs: the wave a default panel is shaped for (it changes only the tile order)


@dataclass
class Persistent:
    """The persistent schedule: `tiles` blocks of the original grid (int, or Python text over the dim names), in
    panels of `panel` tile rows when the kernel has no T.use_swizzle (`default_panel`)."""

    tiles: object
    panel: int | None = None

    def describe(self) -> str:
        order = f"panels of {self.panel} tile rows, the default without T.use_swizzle" if self.panel else \
            "T.use_swizzle order"
        return (f"# persistent: min({self.tiles}, resident blocks) blocks loop over {self.tiles} tiles "
                f"({order}), the stage ring continuing across tiles")


def default_panel(launch: N.Launch, ws) -> int | None:
    """Tile rows per panel of a persistent 2-D grid with no T.use_swizzle call (None with one, even disabled): a
    wave of RESIDENT tiles, p rows by RESIDENT / p columns, reads p * block_M rows of A and RESIDENT / p * block_N
    columns of B, least at p = sqrt(RESIDENT * block_N / block_M) (block_M x block_N: the gemm's accumulator; a
    square tile without one), rounded to an even count. H200 ncu, 128x256 tiles at 4096^3: panels of 16 read 144 MB
    from DRAM, of 8 185 MB, cuBLAS 149 MB; launch order was 0.95x cuBLAS at 8192^3 where panels of 8 were 1.06x."""
    if len(launch.block_vars) < 2 or any(isinstance(n, N.UseSwizzle) for n in walk(launch.body)):
        return None
    gemm = ws.plan.lone_gemm
    shape = shape_ints(gemm.c.buffer.shape) if gemm is not None else None
    block_m, block_n = shape[-2:] if shape and len(shape) >= 2 else (1, 1)
    return max(2, round(math.sqrt(RESIDENT * block_n / block_m) / 2) * 2)


def plan_persistent(func: N.PrimFunc, launch: N.Launch, ws) -> Persistent | str:
    """The persistent schedule of a warp-specialised kernel, or the reason it keeps one block per tile."""
    if not current_options().persistent:
        return "TILELSP_PERSISTENT=0"
    shared_state = coupling(launch)
    if shared_state is not None:
        return shared_state
    if len(launch.grid) != len(launch.block_vars):
        return "grid dimensions without a block index"
    blocks = set(launch.block_vars)  # and the top-level lets computed from them
    for st in _stmts(launch.body):
        if isinstance(st, N.LetStmt) and any(n in blocks for n in walk(st.value)):
            blocks.add(st.var)
    loop = ws.plan.loop
    if any(n in blocks for e in (loop.starts[0], loop.extents[0]) for n in walk(e)):
        return "the pipelined loop's trip count depends on the block index"
    if any(any(shared_rw(st)) for st in _stmts(launch.body) if st is not loop):
        return "shared memory used outside the pipelined loop"
    grid = [as_int(g) for g in launch.grid]
    if None in grid:
        tiles = " * ".join(f"({expr_str(g)})" for g in launch.grid)
    else:
        tiles = 1
        for g in grid:
            tiles *= g
    return Persistent(tiles)


def plan_schedule(ws, func: N.PrimFunc, launch: N.Launch, layouts: dict, arch: str) -> None:
    """Decide a warp-specialised kernel's tile loop (`ws.persistent`) and epilogue (`ws.store`, tma_store); the
    reasons either was refused go to `ws.notes` (the layouts stage prints them)."""
    from .cluster import plan_cluster
    from .streamk import plan_stream_k
    from .tma_store import plan_tma_store

    tiles_plan = plan_persistent(func, launch, ws)
    store = plan_tma_store(func, launch, ws, layouts, arch)
    ws.persistent = None if isinstance(tiles_plan, str) else tiles_plan
    ws.store = None if isinstance(store, str) else store
    cluster = plan_cluster(ws, launch)
    ws.cluster = None if isinstance(cluster, str) else cluster
    if ws.persistent is not None and ws.cluster is None:  # clusters pair tiles 2q, 2q+1 in launch order
        ws.persistent.panel = default_panel(launch, ws)
    split = plan_stream_k(launch, ws) if ws.persistent is not None else None
    ws.stream_k = None if isinstance(split, str) else split
    ws.notes = ([f"# one block per tile: {tiles_plan}"] if isinstance(tiles_plan, str) else [tiles_plan.describe()]) \
        + ([f"# epilogue from registers: {store}"] if isinstance(store, str) else [store.describe()]) \
        + ([f"# blocks alone: {cluster}"] if isinstance(cluster, str) else [cluster.describe()]) \
        + ([f"# last wave data-parallel: {split}"] if isinstance(split, str) else [split.describe()] if split else [])


def coupling(launch: N.Launch) -> str | None:
    """Why the kernel's blocks may depend on one another (so their order or grouping matters), or None."""
    nodes = list(walk(launch.body))
    if any(isinstance(n, N.AtomicAdd) or isinstance(n, N.Call) and n.name.startswith("atomic") for n in nodes):
        return "atomics (a later tile would race with an earlier one)"
    if any(isinstance(n, N.Call) and n.name in _OPAQUE for n in nodes):
        return "an opaque call or grid barrier (its memory effects are unknown)"
    reads, writes = _global_access(nodes)
    if reads & writes:
        return f"reads the tensor it writes ({', '.join(sorted(b.name for b in reads & writes))})"
    return None


def _stmts(body) -> tuple:
    return body.stmts if isinstance(body, N.SeqStmt) else (body,)


def _global_access(nodes) -> tuple[set, set]:
    """(global tensors read, global tensors written), views counted as their root."""
    reads, writes = set(), set()
    for n in nodes:
        if isinstance(n, N.Load):
            reads.add(view_root(n.buffer))
        elif isinstance(n, N.Store):
            writes.add(view_root(n.buffer))
        elif isinstance(n, N.TILE_OPS):
            rs, ws = op_regions(n)
            reads |= {view_root(r.buffer) for r in rs}
            writes |= {view_root(w.buffer) for w in ws}
    keep = {b for b in reads | writes if b.scope == "global"}
    return reads & keep, writes & keep


def launch_lines(em, launch: N.Launch, persistent: Persistent) -> list[str]:
    """The block-index launch of a persistent kernel: one `blockIdx.x` over every tile (the launcher caps it)."""
    return [f'    {_block(em)} = T.launch_thread("blockIdx.x", {_tiles_text(em, launch)})']


def _block(em) -> str:
    """The name of a persistent kernel's one block index."""
    return em.name(Persistent, "pblock")


def _tiles_text(em, launch: N.Launch) -> str:
    tiles = em.roles.ws.persistent.tiles
    return str(tiles) if isinstance(tiles, int) else " * ".join(f"({em.idx(g)})" for g in launch.grid)


def tiles(em, launch: N.Launch, role: str):
    """Yields where a role's body is emitted: once per tile loop of a persistent kernel (plain, once, otherwise),
    with the block indices rebound from the tile index, the ring's base iteration set and the producer's hoisted
    lets recomputed; None for whole tiles, a `streamk.Piece` for the pieces of a stream-K last wave. The
    consumers wait for their last TMA store when the kernel has one (`tma_store`)."""
    ws = em.roles.ws
    if ws.persistent is None:
        yield None
    else:
        yield from _tile_loop(em, launch, role)
    if role == "consumer" and ws.store is not None:
        from .tma_store import drain
        drain(em)


def _tile_loop(em, launch: N.Launch, role: str):
    """The persistent tile loop around the lines emitted at its `yield` (`tiles`), then the stream-K pieces."""
    ws = em.roles.ws
    grid_blocks = 'T.call_extern("int32", "tl::grid_blocks")'  # DEVICE, which generate() adds
    t, tile = em.fresh("tile_i"), em.fresh("tile")
    count, first = _tiles_text(em, launch), _block(em)
    sk = ws.stream_k
    if sk is not None:  # the last wave's tiles go to stream-K when each block gets enough of their k-steps
        from .streamk import emit_pieces, emit_split

        grid_blocks, sk_steps, count = emit_split(em, sk, grid_blocks)
    if ws.cluster is not None:  # clusters of two walk tile pairs: 2 * (cluster + t * clusters) + rank
        count, first, grid_blocks = f"T.truncdiv({count}, 2)", f"T.truncdiv({first}, 2)", \
            f"T.truncdiv({grid_blocks}, 2)"
    em.line(f"for {t} in T.serial(T.truncdiv({count} - {first} + {grid_blocks} - 1, {grid_blocks})):")
    with em.block():
        if ws.cluster is None:
            em.line(f"{tile} = {_block(em)} + {t} * {grid_blocks}")
        else:
            em.line(f"{tile} = ({first} + {t} * {grid_blocks}) * 2 + T.truncmod({_block(em)}, 2)")
        rasterize(em, launch, tile)
        em.roles.ring_base = f"{t} * {em.idx(ws.plan.loop.extents[0])}"
        _hoisted(em, role)
        yield None
    if sk is not None:
        em.line(f"if {sk_steps} > 0:")
        with em.block():
            for tile, piece in emit_pieces(em, sk, _block(em)):
                rasterize(em, launch, tile)
                _hoisted(em, role)
                yield piece
    em.roles.ring_base = None


def _hoisted(em, role: str) -> None:
    """The producer recomputes the hoisted lets for each tile (the consumers recompute them in their own body)."""
    if role == "producer":
        for let in em.roles.ws.hoisted:
            name = em.fresh(let.var.name)
            em.line(f"{name} = {em.emit(let.value)}")
            em.var_text[let.var] = name


DEVICE = r"""
namespace tl {
__device__ __forceinline__ int grid_blocks() { return gridDim.x; }
}  // namespace tl
"""
