"""The epilogue of a warp-specialised kernel through shared memory and a TMA store: `T.copy(C_local, C[..])` at the top
of the kernel body writes the accumulators (converted) into a staging tile laid out as 128-byte swizzled atoms, the
consumers fence the async proxy and meet at their barrier, and one thread stores each atom with
`cp.async.bulk.tensor` (TMA clips rows and columns outside the tensor), committing one bulk group. Before the staging
tile is written again (the next tile of a persistent kernel) that thread waits until the group has read it; the
consumers wait for the last group before they exit. When the whole tile does not fit beside the stages (a deeper
pipeline), the staging is a ring of fewer atoms: each atom is written, stored and committed as its own group, and a
slot is written again once the store that last read it has (the oldest group: bulk groups complete in order). With
two consumer warpgroups that own alternate 64-row bands (the wgmma layout), each warpgroup writes, fences and stores
its own bands (of the whole tile, or of each ring atom, waiting for its own groups) behind its own named barrier, with
its first thread as the elected one, so one warpgroup starts the next tile while the other is still in its epilogue
(H200, results/gpu_hopper_2026-12-03_session20_wg_epilogue_gemm.txt, beside `TILELSP_WG_EPILOGUE=0` in one run:
128x256 GEMMs -2 to +3 %, +0.5 % at 4096^3 and +0.9 % at 8192^3 on average over six configs each; attention
unchanged; the ring, results/gpu_hopper_2026-12-04_session21_clusters.txt: fp8 8192^3 4 stages +0.4 %, fp16/bf16
4 stages within +-1.2 %).

Applies when the copy is the whole accumulator (a wgmma/mma layout, each register pair two adjacent columns) into a
2-D box of a global tensor whose rows are 16-byte multiples, at coordinates every thread agrees on, the tensor is
neither read nor written elsewhere in the kernel, the box's columns are whole 128-byte atoms, and the staging tile (or a
ring of atoms dividing it, for an accumulator whose warps do not split the columns) fits in shared memory beside the
stages. `TILELSP_TMA_STORE=0` keeps the register epilogue; `TILELSP_WG_EPILOGUE=0` one elected thread for both
warpgroups.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...ir import nodes as N
from ...ir.arith import as_int, shape_ints
from ...ir.visitor import op_regions, walk
from ...options import current_options
from ...passes.layout_kinds import Mma, in_fragment
from ...target import parse_target
from .common import LoweringError, is_shared, nbytes, view_root
from .copy_sides import Side, match_tiles
from .tma import MAX_RANK, coordinate_operands, strides_aligned, tensor_map, tile_box


@dataclass
class TmaStore:
    """One accumulator copy stored through a staging tile: `atoms` boxes of the map `tmap` (`inner` columns each),
    staged `slots` atoms at a time (all of them, or a ring of fewer)."""

    copy: N.Copy
    frag: N.Buffer
    tensor: N.Buffer
    axes: list          # the global side's axes, outermost first
    tmap: dict
    rows: int
    inner: int
    atoms: int
    slots: int
    band: int | None = None  # rows per warpgroup band when each consumer warpgroup stores its own rows (`_bands`)

    def emit(self, em) -> None:
        """Lower the copy (module function `emit`)."""
        emit(em, self)

    def describe(self) -> str:
        staging = f"a {self.rows}x{self.inner * self.atoms} shared staging tile" if self.slots == self.atoms else \
            f"a ring of {self.slots} shared {self.rows}x{self.inner} staging slot{'s' if self.slots > 1 else ''}"
        own = f", each consumer warpgroup storing its {self.band}-row bands" if self.band else ""
        return (f"# epilogue: {self.frag.name} -> {self.tensor.name} through {staging}, TMA store box "
                f"{self.tmap['box'][::-1]} x{self.atoms} (swizzle 128){own}")


def plan_tma_store(func: N.PrimFunc, launch: N.Launch, ws, layouts: dict, arch: str) -> TmaStore | str:
    """The TMA-store epilogue of a warp-specialised kernel, or the reason the registers store it themselves."""
    if not current_options().tma_store:
        return "TILELSP_TMA_STORE=0"
    body = launch.body.stmts if isinstance(launch.body, N.SeqStmt) else (launch.body,)
    cands = [s for s in body if isinstance(s, N.Copy) and s.src.buffer.scope == "local.fragment"
             and view_root(s.dst.buffer).scope == "global"]
    if len(cands) != 1:
        return "no single accumulator-to-global copy at the top of the kernel"
    op = cands[0]
    frag, dst = Side(op.src, op.dst), Side(op.dst, op.src)
    try:
        match_tiles(frag, dst, op.span)
    except LoweringError:
        return "the copy's sides do not match"
    lay, g = layouts.get(frag.buf), dst.buf
    shape = shape_ints(frag.buf.shape)
    if not isinstance(lay, Mma) or lay.transpose or lay.regs % 2 or in_fragment(lay, "tx", "r") or shape is None \
            or len(shape) != 2:
        return "the accumulator's layout is not an mma layout"
    if g.base is not None:
        return "the destination is a view"
    if any(as_int(a.start) != 0 for a in frag.axes) or [as_int(a.extent) for a in frag.tile] != list(shape):
        return "the copy stores part of the accumulator"
    rows, cols = shape
    esize, gshape = nbytes(g.dtype), [as_int(d) for d in g.shape]
    box = tile_box(dst.axes, shape)
    if box is None or not 1 <= len(gshape) <= MAX_RANK:
        return "the destination is not a 2-D box of the tensor"
    if not strides_aligned(gshape, esize):
        return "the tensor's rows are not 16-byte multiples (TMA's stride rule)"
    inner = 128 // esize
    if cols % inner or rows % 8 or rows > 256:
        return f"the box ({rows}x{cols}) is not whole 128-byte atoms of at most 256 rows"
    if not _uniform(dst.axes, launch):
        return "the destination's coordinates differ between threads"
    others = [n for n in walk(launch.body) if n is not op and _touches(n, g)]
    if others:
        return f"'{g.name}' is read or written elsewhere in the kernel"
    limit = parse_target(arch).arch.smem_per_block
    atoms, room = cols // inner, limit - _stage_bytes(func, ws) - 2048
    rings = [k for k in range(atoms, 0, -1) if atoms % k == 0 and (k == atoms or lay.wn == 1)]
    slots = next((k for k in rings if rows * inner * esize * k <= room), None)
    if slots is None:
        return f"the staging tile ({rows * cols * esize} bytes, or one {rows}x{inner} atom) does not fit beside the " \
               f"stages ({room} bytes left of {limit})"
    box[-1] = inner
    band = _bands(lay, ws.consumers)
    if band:
        box[-2] = band
    return TmaStore(op, frag.buf, g, list(dst.axes), tensor_map(ws.tensor_maps, g, box, 128), rows, inner, atoms,
                    slots, band)


def _bands(lay: Mma, consumers: int) -> int | None:
    """Rows per band when two consumer warpgroups own alternate bands of the accumulator's rows (the wgmma layout
    over 8 warps along M: warpgroup g holds rows b * 128 + 64 g .. + 64 of every 128-row band b), so each stages and
    stores its own rows behind its own barrier and goes on to the next tile without waiting for the other; None
    otherwise, or with `TILELSP_WG_EPILOGUE=0`."""
    if not current_options().warpgroup_epilogue:
        return None
    if consumers != 256 or not lay.interleave or lay.wm != 8 or lay.wn != 1 or lay.rep != 1:
        return None
    return 16 * lay.wm // 2


def _touches(n, g) -> bool:
    if isinstance(n, (N.Load, N.Store)):
        return view_root(n.buffer) is g
    if isinstance(n, N.TILE_OPS):
        return any(view_root(r.buffer) is g for rs in op_regions(n) for r in rs)
    return False


def _uniform(axes: list, launch: N.Launch) -> bool:
    """Coordinates read no memory and no variable but the block indices, the kernel's parameters and dims, and
    top-level lets of those."""
    body = launch.body.stmts if isinstance(launch.body, N.SeqStmt) else (launch.body,)
    lets = {s.var: s.value for s in body if isinstance(s, N.LetStmt)}
    local = {n.var for n in walk(launch.body) if isinstance(n, N.LetStmt)} - set(lets)
    local |= {v for n in walk(launch.body) if isinstance(n, N.For) for v in n.vars}

    def ok(e, depth=0) -> bool:
        for n in walk(e):
            if isinstance(n, (N.Load, N.Call)) or n in local:
                return False
            if n in lets and (depth > 8 or not ok(lets[n], depth + 1)):
                return False
        return True
    return all(ok(a.start) for a in axes)


def _stage_bytes(func: N.PrimFunc, ws) -> int:
    """Shared bytes of the kernel's tiles (the pipelined ones once per stage) and its mbarriers, 1024-aligned each."""
    total = 16 * ws.plan.num_stages
    for n in walk(func.body):
        if isinstance(n, N.Allocate) and is_shared(n.buffer):
            size = math.prod(shape_ints(n.buffer.shape) or (0,)) * nbytes(n.buffer.dtype)
            total += -(-size * (ws.plan.num_stages if n.buffer in ws.plan.buffers else 1) // 1024) * 1024
    return total


def emit(em, st: TmaStore) -> None:
    """The staging writes, the consumers' barrier and the elected thread's bulk stores of one tile (`TmaStore.emit`:
    copy.py reaches it through the plan, without importing this module)."""

    if em.roles.store_stage is None:
        em.roles.store_stage = em.fresh("store_stage")
        em.frame.scratch[em.roles.store_stage] = (st.tensor.dtype, st.rows * st.inner * st.slots)
    if st.slots == st.atoms:
        if em.roles.ws.persistent is not None:  # the previous tile's store may still be reading the staging tile
            _wait_read(em, 0, st.band)
        _write(em, st, None)
        _sync(em, st.band)  # fence.proxy.async + a barrier: the staging tile is complete for the async proxy
        _store(em, st, range(st.atoms))
        return
    for atom in range(st.atoms):  # a ring: atom `atom` in slot atom % slots, once the store that read it last is done
        if atom >= st.slots or em.roles.ws.persistent is not None:
            _wait_read(em, st.slots - 1, st.band)
        _write(em, st, atom)
        _sync(em, st.band)
        _store(em, st, [atom])


def _elected(band: int | None) -> str:
    """The thread that stores (and waits for) the staging tile: the first consumer, or each warpgroup's first."""
    return "T.floormod(tx, 128) == 0" if band else "tx == 0"


def _sync(em, band: int | None) -> None:
    """The consumers' barrier, or (bands) each warpgroup's own: named barrier 4 + warpgroup over its 128 threads."""
    if not band:
        return em.sync()
    em.line('T.cuda.func_call("tl::warpgroup_sync", source_code="")')
    em.barrier_state.synced()


def _wait_read(em, pending: int, band: int | None) -> None:
    """The elected thread waits until at most `pending` bulk groups still read shared memory; then the barrier."""
    em.line(f"if {_elected(band)}:")
    with em.block():
        em.line(f'T.cuda.func_call("tl::bulk_wait_read<{pending}>", source_code="")')
    _sync(em, band)


def _write(em, st: TmaStore, atom: int | None) -> None:
    """Every thread writes its accumulator pairs (converted) into the staging tile (`atom` None), or those of one
    atom into its ring slot (`atom_pairs`)."""
    from .templates import swizzled_index

    out, esize, lay, stage = st.tensor.dtype, nbytes(st.tensor.dtype), em.plan.layouts[st.frag], em.roles.store_stage
    r, e = em.fresh("r"), em.fresh("e")
    if atom is None:
        em.line(f"for {r} in T.unroll({lay.regs // 2}):")
        pair = r
    else:
        trips, pair = atom_pairs(lay, st.inner, atom, r)
        em.line(f"for {r} in T.unroll({trips}):")
    with em.block():
        row, col = lay.coords("tx", f"({pair} * 2)")
        if atom is not None:
            col = f"({col} - {atom * st.inner})"  # the column within the atom
        cols = st.inner * (st.atoms if atom is None else 1)
        slot, srow, scol = swizzled_index("atoms", cols, esize, [row, col])
        flat = f"(({slot}) * {st.rows * st.inner} + ({srow}) * {st.inner} + {scol})" if atom is None else \
            f"({(atom % st.slots) * st.rows * st.inner} + ({srow}) * {st.inner} + {scol})"
        reg = f"{em.name(st.frag)}[{pair} * 2 + {e}]"
        val = reg if st.frag.dtype == out else f'T.Cast("{out}", {reg})'
        em.line(f"for {e} in T.vectorized(2):")
        with em.block():
            em.line(f"{stage}[{flat} + {e}] = {val}")


def atom_pairs(lay, inner: int, atom: int, r: str) -> tuple[int, str]:
    """(trip count, register-pair index in loop variable `r`) of the accumulator pairs in column atom `atom`
    (`inner` columns): with the warps not splitting the columns a pair's column depends on the register alone, so
    an atom is `inner` / 8 column groups of 2 pairs in each of the layout's `mi` row bands."""
    per = inner // 4
    return lay.mi * per, f"(T.floordiv({r}, {per}) * {2 * lay.ni} + {atom * per} + T.floormod({r}, {per}))"


def _store(em, st: TmaStore, atoms) -> None:
    """The elected thread stores `atoms` of the staging tile (each from its slot; with bands, its warpgroup's bands
    of each) and commits them as one group."""
    em.line(f"if {_elected(st.band)}:")
    with em.block():
        starts = [em.idx(a.start) for a in reversed(st.axes)]
        bands = [f"{b * 2 * st.band} + T.floordiv(tx, 128) * {st.band}" for b in range(st.rows // (2 * st.band))] \
            if st.band else ["0"]
        for j in atoms:
            for row in bands:  # "0": the whole tile's rows; else a band's first row (the tile has a row axis)
                col = f"({starts[0]} + {st.inner * j})" if j else starts[0]
                coords = [col] + (starts[1:] if row == "0" else [f"({starts[1]} + {row})", *starts[2:]])
                at = f"{(j % st.slots) * st.rows * st.inner}" + (f" + ({row}) * {st.inner}" if row != "0" else "")
                em.line(f'T.cuda.func_call("tl::tma_store_{len(st.axes)}d", {st.tmap["arg"]}, '
                        f'{em.roles.store_stage}.ptr_to([{at}]), {", ".join(coords)}, source_code="")')
        em.line('T.cuda.func_call("tl::bulk_commit", source_code="")')


def drain(em) -> None:
    """The consumers' last act: the elected thread (each warpgroup's, with bands) waits until its bulk stores have
    completed."""
    em.line(f"if {_elected(em.roles.ws.store.band)}:")
    with em.block():
        em.line('T.cuda.func_call("tl::bulk_wait<0>", source_code="")')


def _store_functions() -> str:
    out = []
    for rank in range(1, MAX_RANK + 1):
        cs, ops, ins = coordinate_operands(rank, 2)
        out.append(f"template <class Map>\n__device__ __forceinline__ void tma_store_{rank}d(const Map& m, void* src, "
                   f"{cs}) {{\n"
                   f'  asm volatile("cp.async.bulk.tensor.{rank}d.global.shared::cta.bulk_group [%0, {{{ops}}}], '
                   f'[%1];\\n"\n'
                   f'               ::"l"(&m), "r"(smem_u32(src)), {ins} : "memory");\n}}\n')
    return "".join(out)


DEVICE = r"""
namespace tl {
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
template <int N>
__device__ __forceinline__ void bulk_wait() { asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory"); }
// one consumer warpgroup's barrier after its staging writes (named barriers 4 and 5; 1 is both consumers', 2 and 3
// the attention ping-pong's)
__device__ __forceinline__ void warpgroup_sync() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  asm volatile("bar.sync %0, 128;\n" ::"r"(4 + (int)(threadIdx.x / 128)) : "memory");
}
""" + _store_functions() + "}  // namespace tl\n"
