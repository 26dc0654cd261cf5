"""Hopper (sm_90a) TMA + mbarrier schedule of a T.Pipelined loop: which producer copies become bulk tensor copies,
the tensor maps the launcher encodes for them, and the device functions (mbarriers, cp.async.bulk.tensor,
setmaxnreg, the consumers' named barrier) the warp-specialised kernel calls.

Before (tile IR): `for ko in T.Pipelined(n, num_stages=3): T.copy(A[.., ko * 64], A_s); T.copy(B[ko * 64, ..], B_s);
T.gemm(A_s, B_s, C)` in a kernel of 256 threads.
After (`plan_tma`): a producer warpgroup (threads 256..383) whose one elected thread issues, per k, one bulk tensor
copy per 64-column atom of A_s and B_s into stage k % 3, completing on full[k % 3]; the 256 consumer threads wait on
full[k % 3], run the gemm, and release the stage on empty[k % 3]. The box and swizzle of each copy match the
shared layout the wgmma descriptors read (`passes.plan.shared_layouts`: 128-byte atoms, or 32/64/128-byte rows).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...ir import nodes as N
from ...ir.arith import as_int, shape_ints
from ...ir.safe_values import safe_values
from ...ir.visitor import walk
from ...options import current_options
from ...target import TMA, parse_target
from .common import LoweringError, nbytes
from .copy_sides import Side, match_tiles

PRODUCER_THREADS = 128
MAX_RANK = 5  # the most axes a bulk tensor copy addresses


@dataclass
class TmaLoad:
    """One producer copy as bulk tensor copies: `atoms` boxes of the map `tmap` (128-byte atoms for the 128-byte
    swizzle, box width `tmap["box"][0]` columns; one box otherwise)."""

    copy: N.Copy
    tile: N.Buffer
    axes: list          # the global side's axes (start, extent, sliced), outermost first
    tmap: dict
    atoms: int
    bytes: int          # per k-step, every atom


@dataclass
class WarpSpecialization:
    """The TMA + mbarrier, warp-specialised schedule of one T.Pipelined loop."""

    plan: object        # passes.plan.PipelinePlan
    loads: list
    tensor_maps: list = field(default_factory=list)  # {arg, tensor, dtype, box (innermost first), swizzle}
    consumers: int = 128
    hoisted: list = field(default_factory=list)  # top-level lets before the loop both roles need (`n_tiles = ..`)
    persistent: object = None  # persistent.Persistent: one wave of blocks loops over the tiles
    store: object = None       # tma_store.TmaStore: the epilogue through shared memory and a TMA store
    cluster: object = None     # cluster.Cluster: two blocks on adjacent tiles multicast their shared operand
    stream_k: object = None    # streamk.StreamK: the last wave's k-steps split between the blocks
    notes: list = field(default_factory=list)  # the tile loop and epilogue chosen, or why not (persistent.py)

    @property
    def block_threads(self) -> int:
        return self.consumers + PRODUCER_THREADS

    @property
    def registers(self) -> tuple[int, int] | None:
        """(producer, consumer) setmaxnreg counts; None with one consumer warpgroup (255 registers already)."""
        return (40, 232) if self.consumers == 256 else (40, 160) if self.consumers == 384 else None

    def describe(self) -> str:
        loads = ", ".join(f"{ld.tile.name} <- {ld.tmap['tensor']} box {ld.tmap['box'][::-1]} x{ld.atoms} "
                          f"(swizzle {ld.tmap['swizzle'] or 'none'})" for ld in self.loads)
        regs = self.registers
        return (f"# warp-specialised {self.plan.loop.vars[0].name}: {self.plan.num_stages} stages, full/empty "
                f"mbarriers; producer warpgroup (threads {self.consumers}..{self.block_threads - 1}"
                f"{f', setmaxnreg {regs[0]}' if regs else ''}) issues TMA: {loads}; consumers threads "
                f"0..{self.consumers - 1}{f' (setmaxnreg {regs[1]})' if regs else ''}"
                + "".join("\n" + note for note in self.notes))


def plan_tma(func: N.PrimFunc, launch: N.Launch, pipelines: dict, swizzled: dict, wgmma: dict, arch: str,
             threads: int, has_roles: bool) -> WarpSpecialization | None:
    """The warp-specialised TMA schedule of the kernel's one T.Pipelined loop, or None when it does not apply
    (no TMA on the target or in the options, no warp specialisation in the options, no wgmma gemm (sm_90a only), thread roles, a loop not at the top of the kernel, a copy
    TMA cannot express)."""
    options = current_options()
    if not parse_target(arch).has(TMA) or not (options.tma and options.warp_specialized):
        return None
    if not wgmma or len(pipelines) != 1:
        return None
    if has_roles or threads % 128 or threads + PRODUCER_THREADS > 1024:
        return None
    if _hand_scheduled(launch.body):
        return None
    plan = next(iter(pipelines.values()))
    body = launch.body.stmts if isinstance(launch.body, N.SeqStmt) else (launch.body,)
    if not any(s is plan.loop for s in body):
        return None
    inner = {n for n in walk(launch.body) if isinstance(n, N.For)} - {plan.loop}
    local = {v for n in walk(launch.body) if isinstance(n, N.LetStmt) for v in (n.var,)}
    local |= {v for f in inner for v in f.vars}
    hoisted = []
    for st in body[:next(i for i, st in enumerate(body) if st is plan.loop)]:
        if isinstance(st, N.LetStmt) and _independent(st.value, local):
            hoisted.append(st)
            local.discard(st.var)
    for e in (plan.loop.starts[0], plan.loop.extents[0]):
        if not _independent(e, local):
            return None
    loads, maps, safe = [], [], safe_values(func.body)
    for p in plan.producers:
        if p.src.buffer in safe:  # TMA fills zeros outside the tensor, not the annotated value
            return None
        load = _tma_load(p, swizzled.get(p.dst.buffer), maps)
        if load is None or not all(_independent(a.start, local) for a in load.axes):
            return None
        loads.append(load)
    return WarpSpecialization(plan, loads, maps, threads, hoisted)


def _hand_scheduled(body) -> bool:
    """The kernel already manages barriers or registers itself (T.alloc_barrier, T.set_max_nreg, ...)."""
    from .threads import STATEMENTS

    return any(isinstance(n, N.Allocate) and n.buffer.scope == "shared.barrier" or isinstance(n, N.Call) and
               n.name in STATEMENTS and n.name != "sync_threads" for n in walk(body))


def _independent(e, local: set) -> bool:
    """`e` reads no per-thread state: no loads and no variables defined inside the kernel body."""
    return not any(isinstance(n, N.Load) or n in local for n in walk(e))


def _tma_load(op: N.Copy, kind: str | None, maps: list) -> TmaLoad | None:
    """A producer copy (global -> whole shared tile) as bulk tensor copies, or None."""
    src, dst = Side(op.src, op.dst), Side(op.dst, op.src)
    try:
        match_tiles(src, dst, op.span)
    except LoweringError:
        return None
    g, tile = src.buf, dst.buf
    shape, gshape = shape_ints(tile.shape), [as_int(d) for d in g.shape]
    if g.dtype != tile.dtype or shape is None or len(shape) != 2 or not 1 <= len(gshape) <= MAX_RANK:
        return None
    if any(as_int(a.start) != 0 for a in dst.axes) or [as_int(a.extent) for a in dst.tile] != list(shape):
        return None
    box = tile_box(src.axes, shape)
    esize, (rows, cols) = nbytes(g.dtype), shape
    if box is None or not strides_aligned(gshape, esize):
        return None
    if kind == "atoms":  # 128-byte atoms: 64 columns of fp16, 128 of fp8
        swizzle, inner = 128, 128 // esize
        atoms = cols // inner
    elif kind == "rows":
        swizzle, inner, atoms = cols * esize, cols, 1
        if swizzle not in (32, 64, 128):
            return None
    else:
        swizzle, inner, atoms = 0, cols, 1
        if cols * esize % 16 or rows * cols * esize % 128:
            return None
    if (swizzle and rows % 8) or inner > 256 or any(b > 256 for b in box[:-1]):
        return None
    box[-1] = inner
    return TmaLoad(op, tile, list(src.axes), tensor_map(maps, g, box, swizzle), atoms, rows * cols * esize)


def tile_box(axes, shape) -> list | None:
    """The TMA box (outermost axis first) of a global slice `axes` that holds a 2-D tile of `shape`, or None: every
    axis a constant extent, the innermost sliced and as wide as the tile, the tile's dims the box's non-unit ones."""
    box = [as_int(a.extent) if a.sliced else 1 for a in axes]
    if None in box or not axes[-1].sliced or box[-1] != shape[1]:
        return None
    return box if [b for b in box if b != 1] == [d for d in shape if d != 1] else None


def strides_aligned(gshape: list, esize: int) -> bool:
    """TMA's stride rule: every axis above the innermost of a tensor of `gshape` steps a known multiple of 16
    bytes."""
    return not any(d is None for d in gshape[1:]) and not any(d * esize % 16 for d in _strides(gshape[1:]))


def tensor_map(maps: list, tensor: N.Buffer, box: list, swizzle: int) -> dict:
    """The tensor map of `tensor` with this box (outermost first) and swizzle, added to the kernel's `maps` unless
    one is there already."""
    key = {"tensor": tensor.name, "dtype": tensor.dtype, "box": box[::-1], "swizzle": swizzle}
    root = tensor
    while root.base is not None:  # a view of a parameter (T.Tensor(shape, dtype, A.data), T.reshape): the map
        root = root.base          # covers the parameter's storage with the view's shape
    view_shape = [as_int(d) for d in tensor.shape]
    if root is not tensor and None not in view_shape:
        key.update(tensor=root.name, shape=view_shape)
    tmap = next((m for m in maps if all(m.get(k) == v for k, v in key.items())), None)
    if tmap is None:
        tmap = dict(key, arg=f"{_ident(tensor.name)}_tmap{len(maps)}")
        maps.append(tmap)
    return tmap


def coordinate_operands(rank: int, first: int) -> tuple[str, str, str]:
    """A rank-`rank` box coordinate list of the device functions: the C parameters (`int c0, ...`), their asm
    operands from `%first` and the asm inputs."""
    return (", ".join(f"int c{i}" for i in range(rank)), ", ".join(f"%{first + i}" for i in range(rank)),
            ", ".join(f'"r"(c{i})' for i in range(rank)))


def _strides(dims: list) -> list:
    """Elements between consecutive indices of each axis above the innermost (dims: the axes below it)."""
    out, acc = [], 1
    for d in reversed(dims):
        acc *= d
        out.append(acc)
    return out


def _ident(name: str) -> str:
    return "".join(c if c.isalnum() or c == "_" else "_" for c in name)


def rewrite_signature(source: str, maps: list) -> str:
    """Each tensor map travels by value: `void* __restrict__ A_tmap0` -> `const __grid_constant__ CUtensorMap`;
    and setmaxnreg needs a register cap at entry: `__launch_bounds__(n)` -> `__launch_bounds__(n, 1)`."""
    import re

    for m in maps:
        source = source.replace(f"void* __restrict__ {m['arg']}", f"const __grid_constant__ CUtensorMap {m['arg']}")
    return re.sub(r"__launch_bounds__\((\d+)\)", r"__launch_bounds__(\1, 1)", source)


def _tma_functions() -> str:
    out = []
    for rank in range(1, MAX_RANK + 1):
        cs, ops, ins = coordinate_operands(rank, 3)
        out.append(f"__device__ __forceinline__ void tma_load_{rank}d(const CUtensorMap& m, void* dst, uint64_t* bar, "
                   f"{cs}) {{\n"
                   f'  asm volatile("cp.async.bulk.tensor.{rank}d.shared::cluster.global.mbarrier::complete_tx::bytes '
                   f'[%0], [%1, {{{ops}}}], [%2];\\n"\n'
                   f'               ::"r"(smem_u32(dst)), "l"(&m), "r"(smem_u32(bar)), {ins} : "memory");\n}}\n')
    return "".join(out)


DEVICE = r"""
#include <cuda.h>
namespace tl {
__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_fence_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint64_t* bar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(bytes) : "memory");
}
// every consumer thread arrives (no lane-divergent branch: one between a wgmma and its wait_group makes ptxas
// serialise the loop's wgmmas, C7514)
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
// the spin loop stays inside one asm block (scoped labels): a C++ loop around try_wait inside a role branch makes
// ptxas serialise the wgmmas in flight across it (C7514)
__device__ __forceinline__ void mbar_wait(uint64_t* bar, int parity) {
  asm volatile("{\n.reg .pred p;\nWAIT:\nmbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n@!p bra WAIT;\n}\n"
               ::"r"(smem_u32(bar)), "r"(parity) : "memory");
}
__device__ __forceinline__ void tma_prefetch(const CUtensorMap& m) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(&m) : "memory");
}
template <int R>
__device__ __forceinline__ void reg_dealloc() { asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(R)); }
template <int R>
__device__ __forceinline__ void reg_alloc() { asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(R)); }
// the consumer warpgroups' barrier (the producer warpgroup never joins): named barrier 1 over N threads
template <int N>
__device__ __forceinline__ void consumer_sync() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  asm volatile("bar.sync 1, %0;\n" ::"n"(N) : "memory");
}
""" + _tma_functions() + "}  // namespace tl\n"
