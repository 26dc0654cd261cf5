"""`T.sync_grid()` on the CPU backend: the blocks run one after another (or in a parallel loop), so a grid barrier
splits the launch into phases, each a full loop over the blocks. A cluster barrier (`T.cluster_sync()`,
`T.cluster_wait()`; `T.cluster_arrive()` only marks the arrival) splits it the same way: every block of the grid
reaching it first is more than every block of the cluster. The block's place in the grid and in its cluster
(`T.get_block_binding`, `T.block_rank_in_cluster`) comes from the loop over the blocks (`BlockIndex`).

Before: `with T.Kernel(n) as b: <allocs, lets> A; T.sync_grid(); B`.
After: `with T.Kernel(n) as b: <allocs, lets> A` then `with T.Kernel(n) as b: <allocs, lets> B`.

A block's own storage (shared, fragments, locals) does not survive from one phase to the next, so a buffer that
an earlier phase writes and a later phase reads is refused with a diagnostic rather than read stale.
"""
from __future__ import annotations

import dataclasses

from ...ir import nodes as N
from ...ir.visitor import flat_stmts, op_regions, walk
from .expr import LoweringError, cast, const, dtype_of

PHASE_BARRIERS = ("sync_grid", "cluster_sync", "cluster_wait")  # the barriers that end a phase of every block
BLOCK_CALLS = ("get_block_binding", "block_rank_in_cluster")


class BlockIndex:
    """The block being run, from the loop over the blocks: `loop` is the block index of a 1-D grid, or the flat index
    over all blocks (x fastest); `cluster` the launch's cluster shape (Launch.cluster)."""

    def __init__(self, tirx, grid: list, loop, cluster: tuple):
        self.tirx, self.grid, self.loop, self.cluster = tirx, grid, loop, cluster

    def index(self, dim: int, last: bool = False):
        """blockIdx along `dim` (`last`: no wrap needed, the outermost named index)."""
        if dim >= len(self.grid):
            return const(0, dtype_of(self.loop))
        q = self.loop
        for ext in self.grid[:dim]:
            q = self.tirx.floordiv(q, ext)
        return q if last or dim == len(self.grid) - 1 else self.tirx.floormod(q, self.grid[dim])

    def call(self, name: str, args: list):
        """T.get_block_binding(dim) / T.block_rank_in_cluster(): the block's index, or its rank in its cluster (x
        fastest, as %cluster_ctarank; 0 without clusters)."""
        if name == "get_block_binding":
            return cast(self.index(args[0] if args else 0), "int32")
        rank, stride = const(0, "int32"), 1
        for dim, size in enumerate(self.cluster):
            if size > 1:
                rank = rank + cast(self.tirx.floormod(self.index(dim), size), "int32") * const(stride, "int32")
            stride *= size
        return rank


def grid_phases(launch: N.Launch) -> list | None:
    """The launch split at its top-level `T.sync_grid()` calls, None when it has none."""
    stmts = flat_stmts(launch.body)
    cuts = [k for k, s in enumerate(stmts) if _is_grid_sync(s)]
    if not cuts:
        nested = next((n for n in walk(launch.body) if isinstance(n, N.Call) and n.name in PHASE_BARRIERS), None)
        if nested is not None:
            raise LoweringError(f"T.{nested.name} inside a loop or branch is not supported by the CPU backend: it runs "
                                "the grid's blocks one after another, so such a barrier must be a statement of the "
                                "kernel body itself", nested.span)
        return None
    bounds = [-1, *cuts, len(stmts)]
    parts = [stmts[a + 1:b] for a, b in zip(bounds, bounds[1:])]
    prelude: list = []  # allocations and lets every phase re-states
    phases = []
    for part in parts:
        phases.append(prelude + part)
        prelude = prelude + [s for s in part if isinstance(s, (N.Allocate, N.LetStmt))]
    _refuse_carried_storage(phases)
    return [dataclasses.replace(launch, body=N.SeqStmt(tuple(p))) for p in phases]


def _refuse_carried_storage(phases: list) -> None:
    """LoweringError at a read of block storage (not a global tensor) that an earlier phase wrote and this phase
    has not written again before the read."""
    written: set = set()
    for phase in phases:
        own = [s for s in phase if not isinstance(s, (N.Allocate, N.LetStmt))]
        fresh: set = set()
        for s in own:
            for buf, span in _reads(s):
                if buf in written and buf not in fresh:
                    raise LoweringError(f"'{buf.name}' is written before T.sync_grid and read after it; the CPU "
                                        "backend runs the blocks' phases as separate loops, so block storage does "
                                        "not survive the grid barrier: keep the value in a global tensor", span)
            fresh |= {buf for buf in _writes(s) if buf.scope != "global"}
        written |= fresh


def _reads(stmt):
    for n in walk(stmt):
        if isinstance(n, N.Load):
            yield n.buffer, n.span
        elif isinstance(n, N.TILE_OPS):
            for r in op_regions(n)[0]:
                yield r.buffer, n.span


def _writes(stmt):
    for n in walk(stmt):
        if isinstance(n, N.Store):
            yield n.buffer
        elif isinstance(n, N.TILE_OPS):
            for r in op_regions(n)[1]:
                yield r.buffer


def _is_grid_sync(s) -> bool:
    return isinstance(s, N.Evaluate) and isinstance(s.value, N.Call) and s.value.name in PHASE_BARRIERS
