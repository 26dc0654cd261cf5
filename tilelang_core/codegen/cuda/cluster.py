"""Thread-block clusters of two for the persistent warp-specialised pipeline (sm_90a): the two blocks of a cluster
take tiles 2q and 2q+1 of the rasterised order, which share one operand tile (the same B columns, or the same A rows);
each block loads its own tile of the other operand and half of the shared tile's atoms with a TMA multicast into both
blocks' stage, completing on both blocks' full barriers, so L2 serves the shared tile once per pair (a third fewer
bytes per k-step for a 128x256 fp16 tile). A stage is refilled only when both blocks' consumers released it: lane 0
of each consumer warp arrives on its own block's empty barrier and lane 1 on the peer's (the barrier counts the
consumer warps of both blocks, `empty_count`). The blocks meet at a cluster barrier after the barrier setup and before
they exit (the peer still arrives on this block's barriers until then).

Applies to a persistent kernel whose consumers run one gemm, with a constant 2-D grid of an even number of tiles in
which every pair (2q, 2q+1) keeps one block index and changes the other, one load of which does not read the changing
index and splits into an even number of atoms. `TILELSP_CLUSTER=2` turns it on. Off by default: on the H200 the first
form (every consumer thread arriving, half of them remotely, with .release.cluster) was correct but 1.38-1.46x slower
than one block per tile (results/gpu_hopper_gemm_2026-12-03_session18_round2.txt); with .release.cta 2.6-7 % slower
(gpu_hopper_cluster_2026-12-03_session18.txt); with one arrival per warp and block 1.5-3.5 % slower, with 3 or 4
stages (results/gpu_hopper_2026-12-04_session21_clusters.txt). Each refusal reason is printed in the layouts stage.
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.visitor import walk
from ...options import current_options
from .raster import swizzle_hint
from .tma import MAX_RANK, coordinate_operands

SIZE = 2


@dataclass
class Cluster:
    """A cluster of two blocks on adjacent tiles sharing `shared` (a tma.TmaLoad), whose atoms they split."""

    shared: object
    same: str           # the block index both tiles of a pair keep ("bx" or "by")

    def describe(self) -> str:
        ld = self.shared
        return (f"# cluster {SIZE}x1: tiles 2q, 2q+1 keep {self.same}; {ld.tile.name} ({ld.atoms} atoms) multicast, "
                f"half the atoms issued by each block; stages released in both blocks")

    def load_fn(self, ld, j: int, rank: int) -> str:
        """The device function that issues atom `j` of load `ld` (a rank-`rank` box)."""
        if ld is not self.shared:
            return f"tl::tma_load_{rank}d"
        return f"tl::tma_load_mc_{rank}d<{j // (ld.atoms // SIZE)}>"


def plan_cluster(ws, launch: N.Launch) -> Cluster | str:
    """The cluster schedule of a persistent warp-specialised kernel, or the reason its blocks run alone."""
    if current_options().cluster != SIZE:
        return f"TILELSP_CLUSTER={current_options().cluster} (2 turns clusters on)"
    if ws.persistent is None:
        return "not persistent"
    if ws.plan.lone_gemm is None:
        return "the pipelined loop does more than one gemm"
    grid = [as_int(g) for g in launch.grid]
    if len(grid) != 2 or None in grid or len(launch.block_vars) != 2:
        return "the grid is not a constant 2-D grid"
    gx, gy = grid
    if gx * gy % SIZE:
        return f"an odd number of tiles ({gx * gy})"
    hint = swizzle_hint(launch)
    pairs = [(tile_coords(2 * q, gx, gy, hint), tile_coords(2 * q + 1, gx, gy, hint)) for q in range(gx * gy // 2)]
    bx, by = launch.block_vars
    if all(a[0] == b[0] for a, b in pairs):
        same, moving = "bx", by
    elif all(a[1] == b[1] for a, b in pairs):
        same, moving = "by", bx
    else:
        return "tiles 2q and 2q+1 of the rasterised order do not share a block index"
    lets = {st.var: st.value for st in ws.hoisted}
    shared = [ld for ld in ws.loads if not any(_reads(a.start, moving, lets) for a in ld.axes)]
    if not shared:
        return f"every load reads {moving.name}: no operand tile is shared"
    ld = max(shared, key=lambda x: x.bytes)
    if ld.atoms % SIZE:
        return f"the shared tile {ld.tile.name} has {ld.atoms} atom(s), which do not split between two blocks"
    return Cluster(ld, same)


def tile_coords(lin: int, gx: int, gy: int, hint) -> tuple[int, int]:
    """(bx, by) of linear tile `lin` in the order `raster.rasterize` emits."""
    if hint is None:
        return lin % gx, lin // gx
    p = hint.panel_size
    along, across = (gy, gx) if hint.order != "column" else (gx, gy)
    width = p * across
    first = lin // width * p
    size = min(along - first, p)
    local = lin % width
    new_along, new_across = first + local % size, local // size
    return (new_across, new_along) if hint.order != "column" else (new_along, new_across)


def _reads(e, var, lets: dict, depth: int = 0) -> bool:
    for n in walk(e):
        if n is var or n in lets and depth < 8 and _reads(lets[n], var, lets, depth + 1):
            return True
    return False


def empty_count(ws) -> int:
    """Arrivals that release a stage: every consumer thread, or in a cluster one per consumer warp from each block."""
    return ws.consumers // 16 if getattr(ws, "cluster", None) else ws.consumers


def release_fn(ws) -> str:
    """The consumers' stage release: this block's empty barrier, or both blocks' in a cluster."""
    return "tl::mbar_arrive_pair" if ws is not None and getattr(ws, "cluster", None) else "tl::mbar_arrive"


def source_with_dims(source: str, symbol: str, dims: tuple = (SIZE, 1, 1)) -> str:
    """Kernel `symbol` declared (and defined) with a compile-time cluster of `dims` blocks (two along x by default):
    a plain launch forms them."""
    import re

    return re.sub(r"void ((?:__launch_bounds__\([\d, ]+\) )?" + re.escape(symbol) + r"\()",
                  rf"void __cluster_dims__({', '.join(str(d) for d in dims)}) \1", source)


def _mc_functions() -> str:
    out = []
    for rank in range(1, MAX_RANK + 1):
        cs, ops, ins = coordinate_operands(rank, 4)
        out.append(f"template <int Owner>\n__device__ __forceinline__ void tma_load_mc_{rank}d(const CUtensorMap& m, "
                   f"void* dst, uint64_t* bar, {cs}) {{\n"
                   f"  if (cluster_rank() != Owner) return;\n"
                   f'  asm volatile("cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes'
                   f'.multicast::cluster [%0], [%1, {{{ops}}}], [%2], %3;\\n"\n'
                   f'               ::"r"(smem_u32(dst)), "l"(&m), "r"(smem_u32(bar)), "h"((unsigned short)3), {ins} '
                   f': "memory");\n}}\n')
    return "".join(out)


DEVICE = r"""
namespace tl {
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
  return r;
}
// every thread of both blocks (after the barrier setup, and before exit)
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
// one thread per consumer warp releases the stage in each block: lane 0 here, lane 1 in the peer (one asm block: no
// lane-divergent branch); each empty barrier counts the consumer warps (`empty_count`). The warp's wgmma reads are
// complete at its wait_group, so one arrival speaks for the warp, as CUTLASS's signalling threads do; every lane
// arriving (half of them remotely) sent 128 arrivals per block and k-step over the cluster network. The arrival keeps
// the default .release.cta: .release.cluster compiles to MEMBAR.ALL.GPU before every k-step's arrival (1.4x slower)
__device__ __forceinline__ void mbar_arrive_pair(uint64_t* bar) {
  asm volatile("{\n.reg .b32 r, l, a;\n.reg .pred p;\nmov.u32 l, %%laneid;\nsetp.lt.u32 p, l, 2;\n"
               "and.b32 l, l, 1;\nmov.u32 r, %%cluster_ctarank;\nxor.b32 r, r, l;\nmapa.shared::cluster.u32 a, %0, r;\n"
               "@p mbarrier.arrive.shared::cluster.b64 _, [a];\n}\n" ::"r"(smem_u32(bar)) : "memory");
}
""" + _mc_functions() + "}  // namespace tl\n"
