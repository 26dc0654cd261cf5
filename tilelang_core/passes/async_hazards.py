"""Reads of a shared tile while a hand-written asynchronous copy into it may still be in flight: the CUDA path
emits `T.ptx_cp_async` as cp.async, which completes only at a `T.ptx_wait_group` (or, through
`T.cp_async_barrier_noinc`, an mbarrier wait). The CPU backend completes each copy at its statement, which hides a
read placed before the wait."""
from __future__ import annotations

from ..analysis.checks.accesses import root
from ..diagnostics import Related
from ..ir import nodes as N

WAITS = ("ptx_wait_group", "mbarrier_wait_parity")


def async_hazards(acc, emit) -> None:
    """Report the first read of each tile that an unwaited T.ptx_cp_async writes; `acc`: the launch's accesses,
    `emit(code, message, span, related)`."""
    if not any(isinstance(a.op, N.Evaluate) and getattr(a.op.value, "name", None) == "ptx_cp_async" for a in acc.items):
        return
    by_op: dict = {}
    for a in acc.items:
        by_op.setdefault(id(a.op), []).append(a)
    _Walk(by_op, emit).stmt(acc.launch.body)


class _Walk:
    """Program order over the launch's statements, with the copies in flight (a loop's body is walked twice: its
    next iteration reads what the end of this one issued)."""

    def __init__(self, by_op: dict, emit) -> None:
        self.by_op, self.emit = by_op, emit
        self.pending: dict = {}  # id(root) -> the copy's statement
        self.reported: set = set()

    def stmt(self, s) -> None:
        if isinstance(s, N.SeqStmt):
            for x in s.stmts:
                self.stmt(x)
        elif isinstance(s, (N.For, N.While)):
            self.reads(s)
            self.stmt(s.body)
            self.stmt(s.body)
        elif isinstance(s, N.If):
            self.reads(s)
            before = dict(self.pending)
            self.stmt(s.then_body)
            after = self.pending
            self.pending = dict(before)
            self.stmt(s.else_body)
            self.pending.update(after)
        elif isinstance(s, N.Evaluate) and isinstance(s.value, N.Call) and s.value.name in WAITS:
            self.pending.clear()
        elif isinstance(s, N.Evaluate) and isinstance(s.value, N.Call) and s.value.name == "ptx_cp_async":
            dst = _dst(s.value)
            if dst is not None:
                self.pending[id(root(dst))] = s
        elif s is not None:
            self.reads(s)

    def reads(self, s) -> None:
        for a in self.by_op.get(id(s), ()):
            copy = self.pending.get(id(root(a.buffer)))
            if a.mode not in ("read", "accum") or copy is None or id(a.op) in self.reported:
                continue
            self.reported.add(id(a.op))
            line = copy.span.line if copy.span is not None else "?"
            self.emit("async-copy-unwaited",
                      f"{a.buffer.name} is read while the T.ptx_cp_async copy into it at line {line} may still be in "
                      f"flight (no T.ptx_wait_group or mbarrier wait in between; the CPU backend completes the copy "
                      f"at once and hides it); call T.ptx_commit_group() and T.ptx_wait_group(0) before this read, "
                      f"and T.sync_threads() after the wait when other threads read what this thread copied",
                      a.span, (Related(copy.span, "the asynchronous copy is issued here"),) if copy.span else ())


def _dst(call: N.Call):
    """The destination buffer of a T.ptx_cp_async (its first argument, T.access_ptr of a shared element)."""
    ptr = call.args[0] if call.args else None
    if isinstance(ptr, N.Call) and ptr.name == "access_ptr" and ptr.args and isinstance(ptr.args[0], N.Load):
        return ptr.args[0].buffer
    return None
