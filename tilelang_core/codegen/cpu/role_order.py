"""Which thread-level blocks need their warp-specialised roles run as coroutines on the CPU backend.

The CPU backend runs the branches of an `if` on the thread index one after another, in program order
(cpu/simt.py). That order is right unless a role waits for something a role written after it does:
- a wait on an mbarrier that an arrival in another branch later in the program satisfies (a consumer written
  before its producer, two roles that hand work back and forth). A wait and a later arrival inside one loop around
  both are a loop-carried handshake (the wait of iteration k sees iteration k - 1's arrival, which the CPU has run)
  and keep the program order;
- a named barrier (`T.sync_threads(id, count)`) reached by two branches of one `if` chain: a rendezvous.
Such blocks run their role chains as coroutines (cpu/coroutines.py); every other block keeps its lowering.
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.visitor import walk
from .mbarrier import ARRIVE_CALLS, WAIT_CALLS, is_named_barrier

THREAD_CALLS = frozenset({"get_thread_binding", "get_lane_idx", "get_warp_idx", "get_warp_idx_sync",
                          "get_warp_group_idx", "ws"})  # what makes a block thread-level and an `if` a role


def roles_wait_on_each_other(body) -> bool:
    """True when a role waits on an mbarrier that a later role arrives on, or two roles of one chain meet at a
    named barrier."""
    events: list = []  # (kind, barrier buffer, branch, enclosing loops) in program order
    _collect(body, None, (), events)
    for k, (kind, buf, branch, loops) in enumerate(events):
        if kind == "wait" and any(other == "arrive" and b is buf and br != branch and not set(lp) & set(loops)
                                  for other, b, br, lp in events[k + 1:]):
            return True
    return any(_named_rendezvous(n) for n in walk(body) if isinstance(n, N.If) and _on_thread(n))


def _on_thread(s: N.If) -> bool:
    return any(isinstance(n, N.Call) and n.name in THREAD_CALLS for n in walk(s.cond))


def _branches(s: N.If) -> list:
    """The branches of an if/elif/else chain on the thread."""
    out = [s.then_body]
    inner = s.else_body.stmts if isinstance(s.else_body, N.SeqStmt) else (s.else_body,)
    if len(inner) == 1 and isinstance(inner[0], N.If) and _on_thread(inner[0]):
        return out + _branches(inner[0])
    return out + ([s.else_body] if s.else_body is not None else [])


def _named_rendezvous(s: N.If) -> bool:
    """True when two branches of the chain `s` reach a named barrier of the same id."""
    seen: set = set()
    for branch in _branches(s):
        ids = {as_int(n.value.args[0]) for n in walk(branch) if is_named_barrier(n)}
        if ids & seen:
            return True
        seen |= ids
    return False


def _collect(stmt, branch, loops: tuple, events: list) -> None:
    if isinstance(stmt, N.SeqStmt):
        for s in stmt.stmts:
            _collect(s, branch, loops, events)
    elif isinstance(stmt, N.If):
        on_thread = _on_thread(stmt)
        _collect(stmt.then_body, ("then", id(stmt)) if on_thread else branch, loops, events)
        if stmt.else_body is not None:
            _collect(stmt.else_body, ("else", id(stmt)) if on_thread else branch, loops, events)
    elif isinstance(stmt, (N.For, N.While)):
        _collect(stmt.body, branch, loops + (id(stmt),), events)
    elif isinstance(stmt, N.Launch):
        _collect(stmt.body, branch, loops, events)
    elif isinstance(stmt, N.Evaluate) and isinstance(stmt.value, N.Call):
        call = stmt.value
        kind = "arrive" if call.name in ARRIVE_CALLS else "wait" if call.name in WAIT_CALLS else None
        if kind is not None and call.args and isinstance(call.args[0], N.Load):
            events.append((kind, call.args[0].buffer, branch, loops))
