"""Warp-specialised roles the CPU backend cannot order: it runs the branches of an `if` on the thread index one
after another, in program order (cpu/simt.py), so a role that waits on an mbarrier which only a later role arrives
on (a consumer written before its producer, or two roles that hand work back and forth) would read stale data.
Such kernels are refused with a diagnostic at the wait instead of computing wrong values. A wait and a later
arrival inside one loop are a loop-carried handshake (the wait of iteration k sees iteration k - 1's arrival,
which the CPU has run) and pass.
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.visitor import walk
from .expr import LoweringError

_THREAD_CALLS = ("get_thread_binding", "get_lane_idx", "get_warp_idx", "get_warp_idx_sync", "get_warp_group_idx",
                 "ws")
_ARRIVES = ("mbarrier_arrive", "mbarrier_arrive_expect_tx", "cp_async_barrier_noinc")
_WAITS = ("mbarrier_wait_parity",)


def check_role_order(body) -> None:
    """LoweringError at the first mbarrier wait that an arrival in another branch later in the program satisfies."""
    events: list = []  # (kind, barrier buffer, branch, enclosing loops, span) in program order
    _collect(body, None, (), events)
    for k, (kind, buf, branch, loops, span) in enumerate(events):
        if kind != "wait":
            continue
        if any(other == "arrive" and b is buf and br != branch and not set(lp) & set(loops)
               for other, b, br, lp, _ in events[k + 1:]):
            raise LoweringError(f"this wait on the mbarrier '{buf.name}' is satisfied by an arrival in a role that "
                                "comes later in the program: the CPU backend runs the branches on the thread index "
                                "one after another, so warp-specialised roles that wait for each other cannot run "
                                "on it (verify this kernel on a GPU)", span)


def _collect(stmt, branch, loops: tuple, events: list) -> None:
    if isinstance(stmt, N.SeqStmt):
        for s in stmt.stmts:
            _collect(s, branch, loops, events)
    elif isinstance(stmt, N.If):
        on_thread = any(isinstance(n, N.Call) and n.name in _THREAD_CALLS for n in walk(stmt.cond))
        _collect(stmt.then_body, ("then", id(stmt)) if on_thread else branch, loops, events)
        if stmt.else_body is not None:
            _collect(stmt.else_body, ("else", id(stmt)) if on_thread else branch, loops, events)
    elif isinstance(stmt, (N.For, N.While)):
        _collect(stmt.body, branch, loops + (id(stmt),), events)
    elif isinstance(stmt, N.Launch):
        _collect(stmt.body, branch, loops, events)
    elif isinstance(stmt, N.Evaluate) and isinstance(stmt.value, N.Call):
        call = stmt.value
        kind = "arrive" if call.name in _ARRIVES else "wait" if call.name in _WAITS else None
        if kind is not None and call.args and isinstance(call.args[0], N.Load):
            events.append((kind, call.args[0].buffer, branch, loops, stmt.span))
