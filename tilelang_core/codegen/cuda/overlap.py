"""FA3-style overlap of the softmax with the GEMMs in a warp-specialised consumer loop (sm_90a).

Before (tile IR, flash attention): `for k in T.Pipelined(n): init(S); T.gemm(Q_s, K_s, S); softmax(S) -> m, l;
O *= rescale; P = S; T.gemm(P, V_s, O)`, each wgmma waited for where it is issued.
After (`plan_overlap`, emitted by `emit_overlapped`): iteration 0 peeled (S_0 and its softmax); iteration k issues
S_k = Q K_k^T, then O += P_{k-1} V_{k-1}, waits for the first group only (`wgmma.wait_group 1`) and runs the
softmax of S_k while the tensor cores still run P_{k-1} V_{k-1}; then waits for it (`wait_group 0`), releases
stage k-1 and runs the statements that touch O or P; after the loop the last P V. The split is legal when the
statements moved before the second gemm of k-1 touch neither its A operand nor its accumulator (nor any shared
memory the consumers write); otherwise the loop keeps its order. TILELSP_ATTN_OVERLAP=0 turns it off.
With 2 stages the tiles each gemm reads (K for the first, V for the second) get their own full/empty mbarriers
(`load_groups`): K_k is released right after S_k's wait, V_{k-1} after the P V wait, so the producer refills K
while V is still held and the overlap runs with 2 stages too (TILELSP_ATTN_KV_BARRIERS=1: at any stage count,
=0: never).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ...ir import nodes as N
from ...ir.arith import as_int, shape_ints
from ...ir.visitor import walk
from ...options import current_options
from .common import nbytes, shared_rw, used_buffers, view_root
from .unswitch import unswitch_fill

# ping-pong between the two consumer warpgroups (threads 0..255): warpgroup w issues its wgmmas after `bar.sync 2+w`
# and then lets the other one issue (`bar.arrive 3-w`), so one warpgroup's softmax runs under the other's gemms;
# warpgroup 0 arrives once on its own barrier first and takes the other's last arrival at the end (FA3's
# scheduler barriers; ids 0 and 1 are __syncthreads and the consumers' barrier)
PINGPONG = r"""
namespace tl {
__device__ __forceinline__ void pingpong_sync() {
  asm volatile("bar.sync %0, 256;\n" ::"r"(2 + (int)(threadIdx.x / 128)) : "memory");
}
__device__ __forceinline__ void pingpong_arrive() {
  asm volatile("bar.arrive %0, 256;\n" ::"r"(3 - (int)(threadIdx.x / 128)) : "memory");
}
__device__ __forceinline__ void pingpong_first() {
  if (threadIdx.x < 128) asm volatile("bar.arrive 2, 256;\n" ::: "memory");
}
__device__ __forceinline__ void pingpong_last() {
  if (threadIdx.x < 128) asm volatile("bar.sync 2, 256;\n" ::: "memory");
}
}  // namespace tl
"""

# pins a register operand (P, the A of an in-flight wgmma) after its wait_group, as the accumulators are pinned
PIN_WORDS = r"""
namespace tl {
template <int W>
__device__ __forceinline__ void pin_words(void* p) {
#pragma unroll
  for (int i = 0; i < W; ++i) asm volatile("" : "+r"(reinterpret_cast<unsigned*>(p)[i])::"memory");
}
}  // namespace tl
"""


@dataclass
class Overlap:
    """The consumer loop body split around its two wgmma gemms."""

    pre: list           # before the first gemm (its accumulator's initialisation)
    first: N.Gemm       # S = Q K^T: issued, then waited for with one group (the second) still in flight
    mid: list           # run while the second gemm of the previous iteration is in flight
    tail: list          # after that gemm's wait: the statements that touch its A operand or accumulator
    second: N.Gemm      # O += P V, issued one iteration late
    s_regs: int         # accumulator registers per consumer thread of each gemm, and 32-bit words of P
    o_regs: int
    p_words: int
    pingpong: bool      # two consumer warpgroups take turns issuing (PINGPONG)
    split: tuple = ()   # (first's tiles, second's tiles) with separate mbarriers (load_groups); () for one set

    def describe(self) -> str:
        """One line for the layouts stage."""
        return (f"# overlapped: {_name(self.second.c)} += {_name(self.second.a)} @ {_name(self.second.b)} of "
                f"iteration k-1 in flight (wgmma.wait_group 1) during {len(self.mid)} statements after "
                f"{_name(self.first.c)} = gemm k; {len(self.tail)} after wait_group 0"
                + ("; the two consumer warpgroups take turns issuing (named barriers 2, 3)" if self.pingpong else "")
                + (f"; separate mbarriers for {', '.join(t.name for t in self.split[0])} (released after "
                   f"wait_group 1) and {', '.join(t.name for t in self.split[1])}" if self.split else ""))


def _name(region) -> str:
    return region.buffer.name


def plan_overlap(plan, wgmma: dict, consumers: int, loads: tuple = ()) -> Overlap | None:
    """The overlapped schedule of a warp-specialised loop body `pre; gemm1; mid; tail; gemm2`, or None when it
    does not apply (switched off, other shapes of body, a dependence the reordering would break). On by default
    with 3 or more stages: stage k-1 is held until the middle of iteration k, which with 2 stages leaves the
    producer no time (H200, results/gpu_hopper_attn_2026-12-03_session18: 27 % slower with 2 stages) unless
    the gemms' tiles have separate mbarriers (`loads`: the TMA loads; `_split_tiles`).
    TILELSP_ATTN_OVERLAP=1 forces it, =0 turns it off; TILELSP_ATTN_PINGPONG=0 turns the ping-pong off."""
    options = current_options()
    if options.attn_overlap == "off":
        return None
    body = list(plan.consumers)
    gemms = [i for i, c in enumerate(body) if isinstance(c, N.Gemm)]
    if len(gemms) != 2 or gemms[1] != len(body) - 1 or not all(id(body[i]) in wgmma for i in gemms):
        return None
    first, second = body[gemms[0]], body[-1]
    if isinstance(first.clear_accum, N.Expr) or second.clear_accum is not False:
        return None  # a run-time clear is a branch between the wgmmas (ptxas would serialise them)
    if second.a.buffer.scope != "local.fragment" or any(shared_rw(c)[1] for c in body):
        return None
    # what gemm2 reads or writes while in flight: its operands in registers and any local its regions index with
    held = {view_root(b) for b in used_buffers(second) if b.scope not in ("shared.dyn", "shared")}
    held |= {view_root(second.a.buffer), view_root(second.c.buffer)}
    pre, after = body[:gemms[0]], body[gemms[0] + 1:-1]
    n_mid = next((i for i, c in enumerate(after) if _touches(c, held)), len(after))
    mid, tail = after[:n_mid], after[n_mid:]
    if not mid or any(_touches(c, held) for c in (*pre, first)):
        return None
    if view_root(first.c.buffer) in held:
        return None
    bound = {v for c in body for n in walk(c) for v in _binds(n)}
    if any(n in bound for n in walk(second)):
        return None  # gemm2 reads a variable set inside the body: it cannot move to the next iteration
    s_shape, o_shape, p_shape = (shape_ints(g.buffer.shape) for g in (first.c, second.c, second.a))
    if not (s_shape and o_shape and p_shape):
        return None
    split = _split_tiles(loads, first, second, (*pre, *mid, *tail), plan.num_stages)
    if options.attn_overlap != "on" and plan.num_stages < 3 and not split:
        return None
    p_bytes = math.prod(p_shape) * nbytes(second.a.buffer.dtype)
    return Overlap(pre, first, mid, tail, second, math.prod(s_shape) // consumers, math.prod(o_shape) // consumers,
                   p_bytes // consumers // 4, consumers == 256 and options.attn_pingpong,
                   split)


def _split_tiles(loads, first, second, others, stages: int) -> tuple:
    """(tiles only the first gemm reads, tiles only the second reads) when every TMA-loaded tile is one of them;
    () otherwise. On by default with 2 stages only: H200, one run (results/gpu_hopper_attn_2026-12-03_session18_
    round2): 128x128 2 stages 2.116 -> 2.065 ms, causal 1.248 -> 1.214; at 3 stages 2.101 -> 2.084 but causal
    1.176 -> 1.209. TILELSP_ATTN_KV_BARRIERS=1 forces it at any stage count, =0 turns it off."""
    flag = current_options().attn_kv_barriers
    if flag == "off" or flag != "on" and stages > 2 or not loads:
        return ()
    tiles = [view_root(ld.tile) for ld in loads]
    reads = [{id(view_root(b)) for b in used_buffers(g)} for g in (first, second)]
    rest = {id(view_root(b)) for c in others for b in used_buffers(c)}
    groups = tuple(tuple(t for t in tiles if id(t) in r and id(t) not in o and id(t) not in rest)
                   for r, o in ((reads[0], reads[1]), (reads[1], reads[0])))
    return groups if all(groups) and len(groups[0]) + len(groups[1]) == len(tiles) else ()


def load_groups(ws, ov: Overlap | None) -> list:
    """(loads, mbarrier base) per set of full/empty mbarriers: full[base + stage], empty[base + num_stages +
    stage]; one set for every load unless the overlap gives each gemm's tiles their own."""
    if ov is None or not ov.split:
        return [(ws.loads, 0)]
    ns = ws.plan.num_stages
    return [([ld for ld in ws.loads if any(view_root(ld.tile) is t for t in tiles)], 2 * ns * g)
            for g, tiles in enumerate(ov.split)]


def _binds(node):
    if isinstance(node, N.LetStmt):
        yield node.var
    elif isinstance(node, N.For):
        yield from node.vars


def _touches(stmt, held: set) -> bool:
    return any(view_root(b) in held for b in used_buffers(stmt))


def overlap_enabled(plan, wgmma: dict, ws) -> Overlap | None:
    """The overlap of the warp-specialised loop `plan` when its consumers run it (sm_90a, TMA pipeline; not in a
    persistent kernel, whose stage ring continues across tiles)."""
    if ws is None or ws.plan is not plan or getattr(ws, "persistent", None) is not None:
        return None
    return plan_overlap(plan, wgmma, ws.consumers, tuple(ws.loads))


def stage_note(ws, wgmma: dict) -> str:
    """The layouts stage's line for the overlap of a warp-specialised schedule ('' without one)."""
    ov = overlap_enabled(ws.plan, wgmma, ws) if ws is not None else None
    return f"\n{ov.describe()}" if ov is not None else ""


def emit_overlapped(em, s: N.For, plan, ov: Overlap) -> None:
    """The consumers' loop in the overlapped order (module docstring); `em` is the KernelEmitter."""
    ns, v = plan.num_stages, s.vars[0]
    start, n, it = em.idx(s.starts[0]), em.idx(s.extents[0]), em.name(v)
    n_static = as_int(s.extents[0])
    if n_static == 0:
        return
    s_ptr, o_ptr = (f"{em.name(g.c.buffer)}.ptr_to([0])" for g in (ov.first, ov.second))
    p_ptr = f"{em.name(ov.second.a.buffer)}.ptr_to([0])"
    for text in (PIN_WORDS, *((PINGPONG,) if ov.pingpong else ())):
        em.device_library.need(text)
    # the consumers write no shared memory (plan_overlap); stages are mbarrier-ordered
    em.barrier_state.synced()

    def at(k: str) -> str:
        return k if start == "0" else f"({start} + {k})"

    def use_stage(k: str) -> None:
        for buf in plan.buffers:
            em.pipeline.stage_idx[buf] = em.stage_of(k, ns)
        em.var_text[v] = at(k)

    def issue(*steps) -> None:  # (iteration, gemm): the gemms issued back to back, in the warpgroup's turn
        if ov.pingpong:
            em.device_call("tl::pingpong_sync")
        em.pipeline.wgmma_nowait = True
        for k, g in steps:
            use_stage(k)
            em.stmt(g)
        em.pipeline.wgmma_nowait = False
        if ov.pingpong:
            em.device_call("tl::pingpong_arrive")

    v_base = 2 * ns if ov.split else 0  # the second gemm's tiles' mbarriers

    def second_done(k: str) -> None:
        em.device_call(f"tl::wgmma_wait_fenced<0, {ov.o_regs}>", o_ptr)
        em.device_call(f"tl::pin_words<{ov.p_words}>", p_ptr)
        em.device_call("tl::mbar_arrive", f"{em.roles.bars}.ptr_to([{em.stage_of(k, ns)} + {v_base + ns}])")

    def first_done(k: str) -> None:  # separate mbarriers: the first gemm's tiles go back as soon as it is done
        if ov.split:
            em.device_call("tl::mbar_arrive", f"{em.roles.bars}.ptr_to([{em.stage_of(k, ns)} + {ns}])")

    def second_ready(k: str) -> None:
        if ov.split:
            em.wait_full(k, ns, v_base)

    def guarded(fn) -> None:
        if n_static is None:
            em.line(f"if {n} > 0:")
            with em.block():
                fn()
        else:
            fn()

    def head() -> None:  # iteration 0: S_0 and its softmax, P_0 V_0 left for iteration 1
        em.wait_full("0", ns)
        use_stage("0")
        for c in ov.pre:
            em.stmt(_unswitched(c))
        issue(("0", ov.first))
        em.device_call(f"tl::wgmma_wait_fenced<0, {ov.s_regs}>", s_ptr)
        first_done("0")
        for c in (*ov.mid, *ov.tail):
            em.stmt(c)

    if ov.pingpong:
        em.device_call("tl::pingpong_first")
    guarded(head)
    em.line(f"for {it}_i in T.serial({n_static - 1 if n_static is not None else f'{n} - 1'}):")
    with em.block():
        k = f"({it}_i + 1)"
        em.wait_full(k, ns)
        use_stage(k)
        for c in ov.pre:
            em.stmt(_unswitched(c))
        second_ready(f"{it}_i")
        issue((k, ov.first), (f"{it}_i", ov.second))
        use_stage(k)
        em.device_call(f"tl::wgmma_wait_fenced<1, {ov.s_regs}>", s_ptr)
        first_done(k)
        for c in ov.mid:
            em.stmt(c)
        second_done(f"{it}_i")
        for c in ov.tail:
            em.stmt(c)

    def last() -> None:  # P_{n-1} V_{n-1}
        k = f"({n} - 1)" if n_static is None else str(n_static - 1)
        second_ready(k)
        issue((k, ov.second))
        second_done(k)

    guarded(last)
    if ov.pingpong:
        em.device_call("tl::pingpong_last")
    for buf in plan.buffers:
        em.pipeline.stage_idx.pop(buf, None)
    em.barrier_state.touched()


def _unswitched(stmt):
    """A masked fill before the first gemm as `if <unmasked on this block>: plain fill else: masked fill` (a causal
    mask paid on the diagonal block only, unswitch.py); tl.disable_loop_unswitching or TILELSP_ATTN_UNSWITCH=0 keeps
    it as written."""
    return unswitch_fill(stmt) or stmt if current_options().loop_unswitching else stmt
