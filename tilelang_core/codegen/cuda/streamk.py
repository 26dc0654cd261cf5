"""Stream-K for the last wave of a persistent GEMM: when the tiles do not fill whole waves of the resident blocks
(T tiles over P blocks leave R = T mod P for a last, partial wave), the first T - R tiles stay data-parallel (each
block walks its T / P of them) and the R tiles' k-steps are split evenly between all P blocks: the block of rank
r = P - 1 - blockIdx takes steps [r * R * Kt / P, (r + 1) * R * Kt / P) of the R * Kt in tile-major order, so every
block finishes at the same time instead of P - R of them idling through the last tile.

A block's share begins with the end of one tile (a *contributor* piece: it stores its partial sums to the workspace
slot of its rank and raises its flag) and ends with the start of another (the *finisher* piece: it waits for the
flags of the higher ranks that hold the rest of that tile, adds their partial sums in rank order, clears the flags
for the next launch and runs the epilogue). A contributor piece is always a block's first, so no block waits on one
that waits on it; higher ranks are blocks of lower index, which start first, so a finisher never waits for a block
that another kernel keeps off the SMs. Both roles walk the same pieces, so the stage ring continues across them.
The launcher keeps one zeroed workspace per device and stream (`runtime.launch`): the flags at its start, then a
slot per block.

Applies to a persistent kernel (`persistent.py`) with a static tile count and k trip count whose loop body is one
gemm into a float32 accumulator cleared before the loop (its final value is then the sum of the pieces' partial
sums; whatever follows the loop runs once, in the finisher, on that sum), without clusters. The split happens at
run time only when the last wave is at most `MAX_FILL` full and each block's share is at least `MIN_STEPS` k-steps;
otherwise every tile stays data-parallel. `TILELSP_STREAM_K=0` turns it off.

H200 (results/gpu_hopper_2026-12-03_session19_visit3.txt, each beside its data-parallel build in one run): 8192^3
(2048 tiles, a last wave 52 % full) 1.4-3.7 % faster in fp16, bf16 and fp8; 4096^3 (512 tiles, 88 % full) 3-8 %
slower, with 13 % more bytes read from DRAM (ncu, visit 5): the pieces put neighbouring tiles at different k-steps,
so the operand panels they share are no longer read from L2 together, and a nearly full last wave has little to
win - hence `MAX_FILL`.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...ir import nodes as N
from ...ir.arith import as_int, shape_ints
from ...options import current_options
from .common import local_ints

MIN_STEPS = 4   # a block's share of the last wave below which the wave stays data-parallel
MAX_FILL = (3, 5)  # a last wave fuller than this fraction of the blocks stays data-parallel
PARAM = "sk_workspace"  # the kernel parameter: a flag per block (at most FLAGS), then partial sums per block
FLAGS = 4096  # flags before the partial sums: at a fixed place whatever the grid, so a reused workspace stays clear


@dataclass
class StreamK:
    """The stream-K split of a persistent GEMM's last wave."""

    tiles: int
    steps: int           # k-steps per tile
    acc: N.Buffer        # the float32 accumulator fragment
    regs: int            # its registers per consumer thread

    def describe(self) -> str:
        return (f"# stream-K: when {self.tiles} tiles leave a last wave at most {MAX_FILL[0]}/{MAX_FILL[1]} full, "
                f"its tiles' k-steps ({self.steps} each) are split evenly between the blocks (at least {MIN_STEPS} "
                f"per block); partial sums of {self.acc.name} meet in a workspace of {self.regs} floats per "
                "consumer thread and block")

    def step_info(self, consumers: int) -> dict:
        """What the launcher allocates: FLAGS zeroed flags, then floats of partial sums per block."""
        return {"param": PARAM, "flags": FLAGS, "floats_per_block": self.regs * consumers}


@dataclass
class Piece:
    """Text of one stream-K piece of a block: its first k-step in the tile, the block's rank (its workspace slot)
    and the last rank holding part of the tile."""

    k_begin: str
    slot: str
    last: str


def plan_stream_k(launch: N.Launch, ws) -> StreamK | str:
    """The stream-K split of a persistent kernel, or the reason its last wave stays data-parallel."""
    if not current_options().stream_k:
        return "TILELSP_STREAM_K=0"
    if ws.cluster is not None:
        return "clusters of two walk tile pairs"
    if not isinstance(ws.persistent.tiles, int):
        return "the tile count is known only at launch"
    loop, plan = ws.plan.loop, ws.plan
    steps = as_int(loop.extents[0])
    if steps is None or steps < 2:
        return "the k trip count is not a constant of at least 2"
    gemm = plan.lone_gemm
    if gemm is None or gemm.clear_accum is not False:
        return "the loop body is not one accumulating gemm"
    acc = gemm.c.buffer
    shape = shape_ints(acc.shape)
    if acc.scope != "local.fragment" or acc.dtype != "float32" or shape is None:
        return "the accumulator is not a float32 fragment"
    body = launch.body.stmts if isinstance(launch.body, N.SeqStmt) else (launch.body,)
    at = next(i for i, s in enumerate(body) if s is loop)
    before = [s for s in body[:at] if not isinstance(s, (N.LetStmt, N.AnnotateLayout, N.UseSwizzle, N.Allocate))]
    if not (len(before) == 1 and isinstance(before[0], N.Fill) and before[0].dst.buffer is acc
            and as_int(before[0].value) == 0):
        return f"{acc.name} is not only cleared before the loop"
    return StreamK(ws.persistent.tiles, steps, acc, math.prod(shape) // ws.consumers)


def split(body) -> tuple[tuple, tuple]:
    """The consumers' statements up to the pipelined loop, and the epilogue after it."""
    stmts = body.stmts if isinstance(body, N.SeqStmt) else (body,)
    at = next(i for i, s in enumerate(stmts) if isinstance(s, N.For) and s.kind == "pipelined")
    return stmts[:at + 1], stmts[at + 1:]


def scalars(em) -> list[str]:
    """Texts of the role's stream-K scalars (`common.local_ints`): blocks, the last wave's k-steps, the data-parallel
    tiles, the block's first and end step, its first tile, and the piece's first and end step in its tile."""
    return local_ints(em, "sk", 8)


def emit_split(em, sk: StreamK, grid_blocks: str) -> tuple[str, str, str]:
    """Bind (blocks, the last wave's k-steps or 0 when the wave is fuller than MAX_FILL or a block's share would be
    under MIN_STEPS, the tiles that stay data-parallel)."""
    blocks, sk_steps, dp_tiles = scalars(em)[:3]
    rest = f"T.truncmod({sk.tiles}, {blocks})"
    em.line(f"{blocks} = {grid_blocks}")
    split = f"T.if_then_else({rest} * {sk.steps} >= {blocks} * {MIN_STEPS}, {rest} * {sk.steps}, 0)"
    em.line(f"{sk_steps} = T.if_then_else({rest} * {MAX_FILL[1]} <= {blocks} * {MAX_FILL[0]}, {split}, 0)")
    em.line(f"{dp_tiles} = {sk.tiles} - T.truncdiv({sk_steps}, {sk.steps})")
    return blocks, sk_steps, dp_tiles


def emit_pieces(em, sk: StreamK, block: str):
    """The stream-K pieces of block `block` (after `emit_split`): binds the piece's tile index and k range on the
    emitter and yields (tile index text, Piece) inside the piece loop (`persistent.tiles`). Shares go in reverse
    block order (rank = blocks - 1 - block), so a finisher waits only for blocks of lower index: blocks start in
    index order, so those are running or done even when another kernel holds some of the SMs."""
    kt = sk.steps
    blocks, sk_steps, dp_tiles, lo, hi, first, kb, ke = scalars(em)
    j, rank = em.fresh("sk_piece"), f"({blocks} - 1 - {block})"
    em.line(f"{lo} = T.truncdiv({rank} * {sk_steps}, {blocks})")
    em.line(f"{hi} = T.truncdiv(({rank} + 1) * {sk_steps}, {blocks})")
    em.line(f"{first} = T.truncdiv({lo}, {kt})")
    em.line(f"for {j} in T.serial(T.truncdiv({hi} - 1, {kt}) - {first} + 1):")
    with em.block():
        ts = f"({first} + {j})"
        em.line(f"{kb} = T.max({lo} - {ts} * {kt}, 0)")
        em.line(f"{ke} = T.min({hi} - {ts} * {kt}, {kt})")
        em.roles.k_range = (kb, f"({ke} - {kb})")
        # the ring continues after this block's data-parallel tiles (T - R of them, a multiple of the blocks)
        em.roles.ring_base = f"(T.truncdiv({dp_tiles}, {blocks}) * {kt} + {ts} * {kt} + {kb} - {lo})"
        # the last rank holding a step of this tile: the owner of step (ts + 1) * kt - 1
        last = f"T.truncdiv((({ts} + 1) * {kt}) * {blocks} - 1, {sk_steps})"
        yield f"({dp_tiles} + {ts})", Piece(kb, rank, last)
    em.roles.k_range = None


def emit_fixup(em, sk: StreamK, piece: Piece, epilogue: tuple) -> None:
    """After a piece's k-steps: a contributor stores its partial sums and raises its flag; the finisher adds the
    other holders' partial sums (blocks of lower index, each once its flag is up) and runs the epilogue."""
    acc = f"{em.name(sk.acc)}.ptr_to([0])"
    shape = f"{sk.regs}, {em.threads}"
    em.line(f"if {piece.k_begin} > 0:")
    with em.block():
        em.line(f'T.cuda.func_call("tl::sk_store<{shape}>", {PARAM}, {piece.slot}, {acc}, source_code="")')
        em.sync()
        em.line("if tx == 0:")
        with em.block():
            em.line(f'T.cuda.func_call("tl::sk_signal", {PARAM}, {piece.slot}, source_code="")')
    em.line("else:")
    with em.block():
        c = em.fresh("sk_from")
        em.line(f"for {c} in T.serial({piece.last} - {piece.slot}):")
        with em.block():
            em.line("if tx == 0:")
            with em.block():
                em.line(f'T.cuda.func_call("tl::sk_wait", {PARAM}, {piece.slot} + {c} + 1, source_code="")')
            em.sync()
            em.line(f'T.cuda.func_call("tl::sk_add<{shape}>", {PARAM}, {piece.slot} + {c} + 1, {acc}, '
                    'source_code="")')
        em.body(N.SeqStmt(tuple(epilogue)))


DEVICE = r"""
namespace tl {
// stream-K workspace: SK_FLAGS flags (zero between launches), then a slot of R x N floats per block (register r of
// thread t at [(r / 4) * N + t] * 4 + r % 4)
constexpr int SK_FLAGS = """ + str(FLAGS) + r""";
template <int R, int N>
__device__ __forceinline__ float* sk_slot(void* ws, int slot) {
  return reinterpret_cast<float*>(ws) + SK_FLAGS + (size_t)slot * R * N;
}
template <int R, int N>
__device__ __forceinline__ void sk_store(void* ws, int slot, const float* acc) {
  float4* dst = reinterpret_cast<float4*>(sk_slot<R, N>(ws, slot)) + threadIdx.x;
#pragma unroll
  for (int r = 0; r < R; r += 4) dst[(r / 4) * N] = make_float4(acc[r], acc[r + 1], acc[r + 2], acc[r + 3]);
  __threadfence();
}
__device__ __forceinline__ void sk_signal(void* ws, int slot) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;\n" ::"l"(reinterpret_cast<unsigned*>(ws) + slot), "r"(1u)
               : "memory");
}
__device__ __forceinline__ void sk_wait(void* ws, int slot) {
  unsigned* flag = reinterpret_cast<unsigned*>(ws) + slot;
  unsigned v = 0;
  do {
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(v) : "l"(flag) : "memory");
  } while (v == 0);
  *flag = 0;  // ready for the next launch (only this block reads it)
}
template <int R, int N>
__device__ __forceinline__ void sk_add(void* ws, int slot, float* acc) {
  const float4* src = reinterpret_cast<const float4*>(sk_slot<R, N>(ws, slot)) + threadIdx.x;
#pragma unroll
  for (int r = 0; r < R; r += 4) {
    float4 p = src[(r / 4) * N];
    acc[r] += p.x; acc[r + 1] += p.y; acc[r + 2] += p.z; acc[r + 3] += p.w;
  }
}
}  // namespace tl
"""
