"""CUDA lowering of thread-level programming: thread indices, block and named barriers, mbarriers
(`T.alloc_barrier` + arrive/wait), register-budget hints and warp-specialised `T.ws` roles.

Block threads are launched flat (`tx` = threadIdx.x over threads=(x, y, z)), so threadIdx.y/z are
recomputed from `tx`. mbarriers live in the dynamic shared-memory pool; thread 0 initialises them.
"""
from __future__ import annotations

import re

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.visitor import op_regions, walk
from ...passes.roles import MBARRIER_CALLS as _BARRIER_CALLS
from ...passes.roles import Roles, is_ws, synchronising
from . import cpasync
from .common import LoweringError

THREAD_INDEX = ("get_thread_binding", "get_lane_idx", "get_warp_idx", "get_warp_group_idx")
_NO_OPS = ("no_set_max_nreg", "disable_warp_group_reg_alloc", "annotate_producer_reg_dealloc",
           "annotate_consumer_reg_alloc",
           "wait_wgmma",  # every wgmma gemm (T.wgmma_gemm too) waits for its own group: none is left in flight
           "tma_store_arrive", "tma_store_wait")  # T.tma_copy stores with the calling threads: none in flight
_CLUSTER_BARRIERS = ("cluster_arrive", "cluster_wait", "cluster_sync")
_PDL = ("pdl_trigger", "pdl_sync")  # programmatic dependent launch: griddepcontrol (sm_90), else nothing
STATEMENTS = ("sync_threads", "sync_warp", "sync_grid", *_CLUSTER_BARRIERS, *_PDL, "fence_proxy_async", "set_max_nreg", "inc_max_nreg", "dec_max_nreg", *_BARRIER_CALLS,
              *_NO_OPS, *cpasync.STATEMENTS)
WARP_GROUP = 128
_TX = re.compile(r"\btx\b")
_ABS_MARK = "tx_absolute_index"  # a thread index the user asked for: kept absolute inside a role
_ABS = re.compile(_ABS_MARK)

def unnamed_block(dim: int) -> str:
    """The TVMScript name bound to blockIdx along `dim` when `with T.Kernel(...) as ...` names no index for it."""
    return f"_block_{'xyz'[dim]}"


DEVICE_LIBRARY = r"""
namespace tl {
__device__ __forceinline__ unsigned mbar_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(void* bar, int count) {
  asm volatile("mbarrier.init.shared.b64 [%0], %1;" ::"r"(mbar_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_fence_init() {
#if __CUDA_ARCH__ >= 900
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
}
__device__ __forceinline__ void mbar_arrive(void* bar, int proxy_fence = 0) {
#if __CUDA_ARCH__ >= 900
  if (proxy_fence) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
  asm volatile("mbarrier.arrive.shared.b64 _, [%0];" ::"r"(mbar_addr(bar)) : "memory");
}
// an arrival on the barrier at the same shared address in block `cta` of this cluster (T.mbarrier_arrive cta_id)
__device__ __forceinline__ void mbar_arrive_cluster(void* bar, int cta) {
#if __CUDA_ARCH__ >= 900
  asm volatile("{\n .reg .b32 a;\n mapa.shared::cluster.u32 a, %0, %1;\n"
               " mbarrier.arrive.release.cluster.shared::cluster.b64 _, [a];\n}" ::"r"(mbar_addr(bar)), "r"(cta)
               : "memory");
#endif
}
__device__ __forceinline__ void mbar_wait(void* bar, int parity, int proxy_fence = 0) {
  unsigned done = 0;
  do {
    asm volatile("{\n .reg .pred p;\n mbarrier.test_wait.parity.shared.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}"
                 : "=r"(done) : "r"(mbar_addr(bar)), "r"(parity & 1) : "memory");
  } while (!done);
#if __CUDA_ARCH__ >= 900
  if (proxy_fence) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}
__device__ __forceinline__ void named_bar_sync(int id, int count, int proxy_fence = 0) {
#if __CUDA_ARCH__ >= 900
  if (proxy_fence) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(count) : "memory");
}
__device__ __forceinline__ void sync_warp() { __syncwarp(); }
__device__ __forceinline__ void fence_proxy_async() {
#if __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
}
template <int N, bool INC>
__device__ __forceinline__ void set_max_nreg() {
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if (INC) asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(N));
  else asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(N));
#endif
}
}  // namespace tl
"""


CLUSTER_LIBRARY = r"""
namespace tl {
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.aligned;" ::: "memory"); }
__device__ __forceinline__ void cluster_sync() { cluster_arrive(); cluster_wait(); }
__device__ __forceinline__ int block_rank_in_cluster() {
  unsigned r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return (int)r;
}
__device__ __forceinline__ void pdl_trigger() {
#if __CUDA_ARCH__ >= 900
  cudaTriggerProgrammaticLaunchCompletion();
#endif
}
__device__ __forceinline__ void pdl_sync() {
#if __CUDA_ARCH__ >= 900
  cudaGridDependencySynchronize();
#endif
}
}  // namespace tl
"""


GRID_LIBRARY = r"""
#include <cooperative_groups.h>
namespace tl {
__device__ __forceinline__ void sync_grid() { cooperative_groups::this_grid().sync(); }
}  // namespace tl
"""


class ThreadOps:
    """Thread indices, barriers and role guards, emitted through a KernelEmitter `em`."""

    def __init__(self, em):
        self.em = em
        dims = [as_int(t) for t in em.plan.func.launch.threads] if em.plan.func.launch is not None else [em.threads]
        self.dims = [d or 1 for d in dims] + [1] * (3 - len(dims))
        self.block_threads = em.threads  # em.threads is the role's inside a role
        self.thread_vars = _thread_dependent_vars(em.plan.func.body)
        self.roles = Roles(em.plan.func, em.threads)
        self.role = None  # (first thread, count) of the role being emitted
        self.barrier_ids: dict = {}  # role range -> named barrier id
        self.cooperative = False  # T.sync_grid: the kernel needs a cooperative launch
        # roles that order themselves through mbarriers order the pipeline's stages too (the emitter drops its plans)
        self.orders_stages = any(synchronising(n) for n in walk(em.plan.func.body)
                                 if isinstance(n, N.If) and id(n) in self.roles.branches)

    def _library(self) -> None:
        self.em.device_library.need(DEVICE_LIBRARY)

    def _cluster_library(self) -> None:
        self.em.device_library.need(CLUSTER_LIBRARY)

    # ------------------------------------------------------------------ expressions
    def expr(self, exprs, e: N.Call) -> str | None:
        """Text of a thread/block index or warp shuffle call, None for other calls (an ExprEmitter hook)."""
        if e.name in THREAD_INDEX:
            return self.index(e)
        if e.name == "block_rank_in_cluster":  # %cluster_ctarank: 0 in a launch without clusters
            self._cluster_library()
            return 'T.call_pure_extern("int32", "tl::block_rank_in_cluster")'
        if e.name == "get_block_binding":
            dim, launch = as_int(e.args[0]), self.em.plan.func.launch
            if dim < len(launch.block_vars):
                return self.em.name(launch.block_vars[dim])
            return unnamed_block(dim) if dim < len(launch.grid) else "0"
        if e.name.startswith("shfl_"):
            value, delta, width, mask = e.args
            dtype = e.dtype or "float32"
            fn = "__shfl_sync" if e.name == "shfl_sync" else f"__shfl_{e.name[5:]}_sync"
            return (f'T.call_pure_extern("{dtype}", "{fn}", T.uint32({int(mask.value)}), '
                    f"{exprs.emit(value, dtype)}, {exprs.emit(delta, 'int32')}, {int(width.value)})")
        if e.name.startswith("warp_reduce_"):
            self.em.intrinsic_ops.library()
            op = ("sum", "max", "min", "bitand", "bitor").index(e.name[12:])  # the ops of tl::combine
            dtype = e.dtype or "float32"
            return f'T.call_pure_extern("{dtype}", "tl::lanes_allreduce", {exprs.emit(e.args[0], dtype)}, {op}, 32)'
        return None

    def index(self, e: N.Call) -> str:
        """TVMScript text of a thread-index call (the block's absolute index, also inside a T.ws role)."""
        text = self._index(e)
        return _TX.sub(_ABS_MARK, text) if self.role is not None else text

    def _index(self, e: N.Call) -> str:
        """Flat `tx` split over the launch's thread dims."""
        args = [as_int(a) for a in e.args]
        if e.name == "get_thread_binding":
            dim = args[0] if args else 0
            below = 1
            for d in self.dims[:dim]:
                below *= d
            q = "tx" if below == 1 else f"T.floordiv(tx, {below})"
            return q if below * self.dims[dim] >= self.block_threads else f"T.floormod({q}, {self.dims[dim]})"
        warp = args[0] if args else 32
        if e.name == "get_lane_idx":
            return f"T.floormod(tx, {warp})"
        if e.name == "get_warp_idx":
            return f"T.floordiv(tx, {warp})"
        per_group = args[1] if len(args) > 1 else WARP_GROUP // 32
        return f"T.floordiv(tx, {warp * per_group})"

    # ------------------------------------------------------------------ statements
    def statement(self, s: N.Evaluate) -> bool:
        """Emit a thread-level statement call (see STATEMENTS); False when `s` is not one."""
        em, call = self.em, s.value
        name = call.name if isinstance(call, N.Call) else None
        if name not in STATEMENTS:
            return False
        if name in _NO_OPS:
            return True
        self._library()
        if name in cpasync.STATEMENTS:
            cpasync.emit(em, call)
            return True
        if name == "sync_threads" and not call.args:
            em.sync()
        elif name == "sync_threads":
            bar_id, count = (em.idx(a) for a in call.args)
            em.line(f'T.cuda.func_call("tl::named_bar_sync", {bar_id}, {count}, source_code="")')
        elif name == "sync_warp":
            em.line('T.cuda.func_call("tl::sync_warp", source_code="")')
        elif name == "sync_grid":
            self.sync_grid(call)
        elif name in _CLUSTER_BARRIERS or name in _PDL:  # the cluster's blocks (sm_90); launch ordering
            self._cluster_library()
            em.line(f'T.cuda.func_call("tl::{name}", source_code="")')
            if name != "cluster_arrive":
                em.barrier_state.synced()
        elif name == "fence_proxy_async":
            em.line('T.cuda.func_call("tl::fence_proxy_async", source_code="")')
        elif name in ("set_max_nreg", "inc_max_nreg", "dec_max_nreg"):
            self._set_max_nreg(call)
        else:
            self._barrier(call)
        return True

    def sync_grid(self, call: N.Call) -> None:
        """A barrier of every thread of the grid (cooperative groups); the kernel must then be launched
        cooperatively, with all its blocks resident at once (runtime.launch checks that they fit)."""
        em = self.em
        if self.role is not None or em.parallel_scope.in_parallel:
            raise LoweringError("T.sync_grid inside a thread role or a branch on the thread index: every thread of "
                                "the grid must reach it; call it where the whole block runs", call.span)
        em.device_library.need(GRID_LIBRARY)
        self.cooperative = True
        em.line('T.cuda.func_call("tl::sync_grid", source_code="")')
        em.barrier_state.synced()

    def _set_max_nreg(self, call: N.Call) -> None:
        values = [as_int(a) for a in call.args]
        if call.name != "set_max_nreg":
            values = values[:1] + [1 if call.name == "inc_max_nreg" else 0]
        if len(values) != 2 or None in values or not 24 <= values[0] <= 256 or values[0] % 8:
            raise LoweringError(f"T.{call.name} needs a compile-time register count, a multiple of 8 in "
                                "[24, 256] (setmaxnreg)", call.span)
        self.em.line(f'T.cuda.func_call("tl::set_max_nreg<{values[0]}, {"true" if values[1] else "false"}>", '
                     'source_code="")')

    def _barrier(self, call: N.Call) -> None:
        em = self.em
        bar = call.args[0]
        ptr = f"{em.name(bar.buffer)}.ptr_to([{em.idx(bar.indices[0])}])"
        if call.name == "mbarrier_arrive":
            if len(call.args) > 1:  # on block cta_id's barrier of this cluster (sm_90: generate._within_limits)
                em.line(f'T.cuda.func_call("tl::mbar_arrive_cluster", {ptr}, {em.idx(call.args[1])}, '
                        'source_code="")')
                return
            # wgmma reads shared memory through the async proxy: writes before the arrive must be fenced for it
            em.line(f'T.cuda.func_call("tl::mbar_arrive", {ptr}, {1 if em.plan.wgmma else 0}, source_code="")')
        elif call.name == "mbarrier_wait_parity":
            # what the arriving threads wrote with cp.async (generic proxy) is read by wgmma (async proxy) after it
            em.line(f'T.cuda.func_call("tl::mbar_wait", {ptr}, {em.idx(call.args[1])}, {1 if em.plan.wgmma else 0}, '
                    'source_code="")')
        else:  # no copy posts transaction bytes (T.tma_copy copies with the calling threads): the phase would hang
            raise LoweringError(f"T.{call.name} counts the bytes of TMA transfers, but the CUDA backend copies "
                                "synchronously (T.tma_copy included) and posts none; let the copying threads "
                                "arrive on the barrier (T.barrier_arrive) instead", call.span)

    def alloc_barrier(self, s: N.Allocate) -> None:
        """Place the mbarriers in shared memory; thread 0 initialises them before a block barrier."""
        em = self.em
        self._library()
        counts = s.init.args if isinstance(s.init, N.Call) else ()
        name = em.name(s.buffer)
        em.frame.scratch[name] = ("uint64", max(len(counts), 1))
        em.line("if tx == 0:")
        with em.block():
            for k, c in enumerate(counts):
                em.line(f'T.cuda.func_call("tl::mbar_init", {name}.ptr_to([{k}]), {em.idx(c)}, source_code="")')
            em.line('T.cuda.func_call("tl::mbar_fence_init", source_code="")')
        em.sync()

    # ------------------------------------------------------------------ role guards
    def if_stmt(self, s: N.If) -> bool:
        """Emit a role `if` (a branch on a range of threads, or `T.ws`) or check a thread-dependent `if`; False when
        `em` should emit `s` itself."""
        em = self.em
        if is_ws(s) and id(s) not in self.roles.branches:
            em.body(s.then_body)  # roles without mbarriers run on every thread in program order (same result)
            return True
        if id(s) in self.roles.branches:
            self._roles(s, *self.roles.branches[id(s)])
            return True
        if self._thread_dependent(s.cond):
            self._diverging(s.then_body, s)
            if s.else_body is not None:
                self._diverging(s.else_body, s)
            with self.em.parallel_scope.diverging():  # threads diverge: no automatic __syncthreads() inside
                self.em.if_stmt(s)
            return True
        return False

    def _diverging(self, body, s: N.If) -> None:
        """Raise at a tile op in a branch that is no role (not a range of whole warps)."""
        op = _first_block_op(body)
        if op is not None:
            raise LoweringError(f"{_describe(op)} inside an `if` on the thread index that does not select whole "
                                "warps is not supported by the CUDA lowering: a tile op in a branch runs on the "
                                "threads the branch selects, which must be a contiguous range of whole warps "
                                "(`if tx < 128:`, `elif 128 <= tx < 256:`); move it out of the `if` or widen "
                                "the condition", getattr(op, "span", None) or s.span)

    def _roles(self, s: N.If, then_rng, else_rng) -> None:
        """`if cond: <role> else: <role or diverging code>`; each role is emitted for its own threads. After roles
        that order themselves through mbarriers no block barrier may follow (it would wait for a role that waits
        on another); otherwise the next shared-memory access waits for the whole block."""
        em = self.em
        if em.barrier_state.dirty_r or em.barrier_state.dirty_w:
            em.sync()  # a later role may read what the threads wrote before the roles
        cond = f"T.floordiv(tx, {WARP_GROUP}) == {as_int(s.cond.args[0])}" if is_ws(s) else em.emit(s.cond, "bool")
        em.line(f"if {cond}:")
        self._branch(s.then_body, then_rng, s)
        if s.else_body is not None:
            em.line("else:")
            self._branch(s.else_body, else_rng, s)
        em.barrier_state.synced()
        if not synchronising(s):  # the next shared-memory access waits for the whole block
            em.barrier_state.touched()

    def _branch(self, body, rng, s: N.If) -> None:
        em = self.em
        if rng is None:
            self._diverging(body, s)
            with em.parallel_scope.diverging(), em.block():
                em.body(body)
            return
        self._role(body, rng)

    def _role(self, body, rng) -> None:
        """One role's body on threads [first, first + count) (em.role_body): tile ops laid out for `count` threads
        (`tx` made relative to the role), block barriers turned into a named barrier of the role."""
        em = self.em
        first, count = rng
        outer, self.role = self.role, rng

        def placed(lines: list[str]) -> list[str]:
            lines = [_TX.sub(f"({_ABS_MARK} - {first})" if first else _ABS_MARK, ln) for ln in lines]
            return lines if outer is not None else [_ABS.sub("tx", ln) for ln in lines]
        try:
            with em.role_body(count, lambda: self._role_sync(rng), placed):
                em.barrier_state.synced()  # the block synchronised before the roles
                em.body(body)
        finally:
            self.role = outer

    def _role_sync(self, rng) -> None:
        """Named barrier of one role (`bar.sync id, count`), after an async-proxy fence when wgmma reads smem."""
        em = self.em
        self._library()
        fence = 1 if em.plan.wgmma else 0
        em.line(f'T.cuda.func_call("tl::named_bar_sync", {self.barrier_id(rng)}, {rng[1]}, {fence}, '
                'source_code="")')
        em.barrier_state.synced()

    def barrier_id(self, rng) -> int:
        """Named barrier of a role: 1 + g for warp group g (T.ws's), else the next free id counting down from 15."""
        if rng not in self.barrier_ids:
            first, count = rng
            if count == WARP_GROUP and first % WARP_GROUP == 0:
                self.barrier_ids[rng] = 1 + first // WARP_GROUP
            else:
                taken = set(self.barrier_ids.values())
                self.barrier_ids[rng] = next(i for i in range(15, 0, -1) if i not in taken)
        return self.barrier_ids[rng]

    def is_role(self, s) -> bool:
        """True for an `if` whose branches are emitted as roles (the emitter leaves its barriers to them)."""
        return id(s) in self.roles.branches

    def _thread_dependent(self, cond) -> bool:
        return any(_is_thread_index(n, self.thread_vars) for n in walk(cond))


def _thread_dependent_vars(body) -> set:
    """Let-bound variables whose value depends on the thread index (fixpoint over the body's LetStmts)."""
    lets = [n for n in walk(body) if isinstance(n, N.LetStmt)]
    out: set = set()
    changed = True
    while changed:
        changed = False
        for let in lets:
            if let.var not in out and any(_is_thread_index(n, out) for n in walk(let.value)):
                out.add(let.var)
                changed = True
    return out


def _is_thread_index(node, thread_vars) -> bool:
    return isinstance(node, N.Call) and node.name in THREAD_INDEX or isinstance(node, N.Var) and node in thread_vars


def _first_block_op(stmt):
    """The first tile op or T.Parallel loop in `stmt` that needs every thread of the block, else None.

    Scalar atomics and tile ops on thread-private buffers (T.alloc_local / alloc_var) run per thread."""

    for n in walk(stmt):
        if isinstance(n, N.For) and n.kind == "parallel":
            return n
        if isinstance(n, N.AtomicAdd) and not isinstance(n.value, N.Region):
            continue
        if isinstance(n, N.TILE_OPS):
            reads, writes = op_regions(n)
            if any(r.buffer.scope not in ("local", "local.var") for r in reads + writes):
                return n
    return None


def _describe(op) -> str:
    if isinstance(op, N.For):
        return "a T.Parallel loop"
    return f"T.{type(op).__name__.lower()}"
