"""The statements of a thread-level CPU block as the SIMT emulation (simt.py) sees them: barriers, warp-collective
calls and shuffles, shared-memory hazards between statements, fragments each thread holds whole."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.visitor import flat_stmts, walk
from .allreduce import REDUCE_CALLS
from .rng import RNG_CALLS
from .role_order import THREAD_CALLS

BARRIER_CALLS = frozenset({"sync_threads", "tvm_storage_sync", "mbarrier_arrive", "mbarrier_wait_parity",
                           "mbarrier_expect_tx", "mbarrier_arrive_expect_tx", "barrier_arrive", "barrier_wait",
                           "cp_async_barrier_noinc"})
PRIVATE_SCOPES = ("local", "local.var")
COLLECTIVE_CALLS = frozenset({"ptx_mma"})  # warp-wide: each thread reads other lanes' registers (cpu/mma.py)
# a value of another lane
SHUFFLE_CALLS = frozenset({"tvm_warp_shuffle", "shfl_xor", "shfl_up", "shfl_down", "shfl_sync"})


def is_thread_level(body) -> bool:
    """True when the block reads a thread index or uses the threads' generators (so its threads must be emulated)."""
    return any(isinstance(n, N.Call) and (n.name in THREAD_CALLS or n.name in RNG_CALLS) for n in walk(body))


def per_thread_fragments(body) -> set:
    """Fragments that each thread holds whole: read and written only by scalar loads and stores outside T.Parallel
    loops, at indices that read no thread index."""
    used, shared = set(), set()
    for n in walk(body):
        buf = getattr(n, "buffer", None)
        if not isinstance(buf, N.Buffer) or buf.scope != "local.fragment":
            continue
        used.add(buf)
        if isinstance(n, N.Allocate):
            continue
        if not isinstance(n, (N.Load, N.Store)) or any(
                isinstance(m, N.Call) and m.name in THREAD_CALLS for i in n.indices for m in walk(i)):
            shared.add(buf)
    for loop in (n for n in walk(body) if isinstance(n, N.For) and n.kind == "parallel"):
        shared.update(n.buffer for n in walk(loop.body) if isinstance(n, (N.Load, N.Store)))
    return used - shared


def is_barrier(s) -> bool:
    """A barrier statement (sync_threads, named barriers, mbarrier arrive/wait): it ends a phase."""
    return isinstance(s, N.Evaluate) and isinstance(s.value, N.Call) and s.value.name in BARRIER_CALLS


def is_collective(s) -> bool:
    """A warp-collective statement (T.ptx_mma, a shuffle): a phase of its own."""
    return isinstance(s, N.Evaluate) and isinstance(s.value, N.Call) and s.value.name in COLLECTIVE_CALLS \
        or is_shuffle(s)


def is_shuffle(s) -> bool:
    """A store or let whose value reads another lane (a warp shuffle): its own phases."""
    return isinstance(s, (N.Store, N.LetStmt)) and any(
        isinstance(n, N.Call) and (n.name in SHUFFLE_CALLS or n.name in REDUCE_CALLS) for n in walk(s.value))


def _has_barrier(s) -> bool:
    return any(isinstance(n, N.Evaluate) and (is_barrier(n) or is_collective(n)) or is_shuffle(n) for n in walk(s))


def shared_rw(s) -> tuple[set, set]:
    """(shared buffers read, shared buffers written) by plain loads and stores in `s`."""
    reads, writes = set(), set()
    for n in walk(s):
        if isinstance(n, N.Load) and n.buffer.scope in ("shared", "shared.dyn"):
            reads.add(n.buffer)
        elif isinstance(n, N.Store) and n.buffer.scope in ("shared", "shared.dyn"):
            writes.add(n.buffer)
    return reads, writes


def conflicts(before: tuple, after: tuple) -> bool:
    """True when `after` (reads, writes) reads what `before` wrote or writes what it touched."""
    return bool(after[0] & before[1] or after[1] & (before[0] | before[1]))


def has_phases(s) -> bool:
    """A barrier inside, or a loop/branch whose statements exchange data through shared memory between them or
    that holds a tile op (which the block runs once, never once per thread)."""
    if _has_barrier(s):
        return True
    if not isinstance(s, (N.For, N.If, N.While, N.SeqStmt)):
        return False
    if any(isinstance(n, N.TILE_OPS) for n in walk(s)):
        return True
    touched = (set(), set())
    for body in (getattr(s, "body", None), getattr(s, "then_body", None), getattr(s, "else_body", None)):
        for st in flat_stmts(body):
            rw = shared_rw(st)
            if conflicts(touched, rw) or has_phases(st):
                return True
            touched[0].update(rw[0])
            touched[1].update(rw[1])
    return False
