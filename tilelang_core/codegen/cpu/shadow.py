"""Pieces of the CPU backend's instrumented mode (sanitize.py): the report's layout and sites, expressions that
keep their path condition, the pass that places load checks, which tensors get writer and reader shadows, and the
run."""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import nodes as N
from ...ir.visitor import walk
from ...source import Span
from ..tvm_loader import load
from .build import ATOMIC_CALLS
from .expr import as_bool, const, dtype_of, match
from .lower_expr import ExprLowerer

ATOMIC = -1  # writer value of an element written by an atomic (0: never written, 1 + block id: a plain store)
COLUMNS = ("hit", "b0", "b1", "b2", "thread", "i0", "i1", "i2", "i3", "o0", "o1", "o2")  # o: the other block


@dataclass(frozen=True)
class Site:
    """One check: its diagnostic code, the user's span, the buffer, the launch's block index names, the
    construct (`element` for the user's own indexing, else the tile op: `T.copy`, `T.gemm`, ...) and what the
    message needs beyond the report row (the loop and axis of a step check, the expression that overflows, the
    lines that write the tensor)."""

    code: str
    span: Span | None
    buffer: N.Buffer
    block_names: tuple[str, ...]
    construct: str
    detail: tuple = ()


def handle(obj) -> int:
    """The address of a TVM object (the key of the shadow and check maps)."""
    return obj.__chandle__()


class SanitizingExpr(ExprLowerer):
    """ExprLowerer that keeps the path condition of conditional sub-expressions (`T.if_then_else`, and/or)."""

    def __init__(self, *args, **kw):
        super().__init__(*args, **kw)
        self.path: list = []

    def _under(self, cond, e):
        self.path.append(cond)
        try:
            return self(e)
        finally:
            self.path.pop()

    def _Select(self, e):
        tirx = load().tirx
        c = as_bool(self(e.cond))
        lit_a = isinstance(e.true_value, N.Const) and not isinstance(e.false_value, N.Const)
        lit_b = isinstance(e.false_value, N.Const) and not isinstance(e.true_value, N.Const)
        a = None if lit_a else self._under(c, e.true_value)
        b = None if lit_b else self._under(tirx.Not(c), e.false_value)
        a = self._literal(e.true_value, dtype_of(b)) if a is None else a
        b = self._literal(e.false_value, dtype_of(a)) if b is None else b
        a, b = match(a, b)
        return tirx.if_then_else(c, a, b)

    def _BoolOp(self, e):
        tirx = load().tirx
        parts = []
        for v in e.values:
            guard = None
            for p in parts:
                p = p if e.op == "and" else tirx.Not(p)
                guard = p if guard is None else tirx.And(guard, p)
            parts.append(as_bool(self(v) if guard is None else self._under(guard, v)))
        out = parts[0]
        for p in parts[1:]:
            out = tirx.And(out, p) if e.op == "and" else tirx.Or(out, p)
        return out


class CheckPlacement:
    """The post-pass: each registered load's check right before the innermost statement holding the load (inside
    that statement's loops and guards); `checks` maps a BufferLoad's handle to its check statement."""

    def __init__(self, checks: dict):
        ns = load()
        self.tirx, self.ir, self.checks = ns.tirx, ns.ir, checks

    def __call__(self, body):
        """The body with the checks placed."""
        return self._seq(self._place(body))

    def _seq(self, stmts: list):
        if not stmts:
            return self.tirx.Evaluate(const(0, "int32"))
        return stmts[0] if len(stmts) == 1 else self.tirx.SeqStmt(stmts)

    def _place(self, s) -> list:
        tirx = self.tirx
        if isinstance(s, tirx.SeqStmt):
            return [x for c in s.seq for x in self._place(c)]
        if isinstance(s, tirx.For):
            body = tirx.For(s.loop_var, s.min, s.extent, s.kind, self._seq(self._place(s.body)))
            return self._checks_in([s.min, s.extent]) + [body]
        if isinstance(s, tirx.IfThenElse):
            other = self._seq(self._place(s.else_case)) if s.else_case is not None else None
            return self._checks_in([s.condition]) + [
                tirx.IfThenElse(s.condition, self._seq(self._place(s.then_case)), other)]
        if isinstance(s, tirx.While):
            return self._checks_in([s.condition]) + [tirx.While(s.condition, self._seq(self._place(s.body)))]
        if isinstance(s, tirx.BufferStore):
            return self._checks_in([s.value] + list(s.indices)) + [s]
        if isinstance(s, (tirx.Bind, tirx.Evaluate)):
            return self._checks_in([s.value]) + [s]
        return [s]

    def _checks_in(self, exprs) -> list:
        if not self.checks:
            return []
        import tvm_ffi

        found: dict = {}

        def visit(x):
            check = self.checks.get(handle(x))
            if check is not None:
                found.setdefault(handle(x), check)

        for e in exprs:
            tvm_ffi.structural_walk(e, (self.ir.TensorLoad, visit))
        return list(found.values())


def atomic_call(s) -> bool:
    """True for `T.atomic_max/min(dst, value)` (an Evaluate of the call)."""
    return isinstance(s, N.Evaluate) and isinstance(s.value, N.Call) and s.value.name in ATOMIC_CALLS


def tracked_params(func: N.PrimFunc, outputs=()) -> list[N.Buffer]:
    """Tensor parameters that get a writer shadow: the written ones and the outputs, unless a view aliases them."""
    written, viewed = set(), set()
    for n in walk(func.body):
        if isinstance(n, N.Store):
            written.add(n.buffer)
        elif isinstance(n, (N.Copy, N.Fill, N.Reduce, N.CumSum, N.AtomicAdd)):
            written.add(n.dst.buffer)
        elif isinstance(n, N.Gemm):
            written.add(n.c.buffer)
        elif atomic_call(n):
            written.add(n.value.args[0].buffer)
        buf = getattr(n, "buffer", None)
        if isinstance(buf, N.Buffer) and buf.base is not None:
            viewed.add(buf.base)
    outs = {func.params[k] for k in outputs}
    return [p for p in func.params if isinstance(p, N.Buffer) and (p in written or p in outs) and p not in viewed]


def read_params(func: N.PrimFunc, tracked: list[N.Buffer]) -> list[N.Buffer]:
    """The tracked parameters the kernel also reads (element loads, tile-op sources): they get a reader shadow."""
    read = set()
    for n in walk(func.body):
        if isinstance(n, N.Load):
            read.add(n.buffer)
        elif isinstance(n, N.Copy):
            read.add(n.src.buffer)
        elif isinstance(n, N.Gemm):
            read.update((n.a.buffer, n.b.buffer))
        elif isinstance(n, (N.Reduce, N.CumSum)):
            read.add(n.src.buffer)
    return [p for p in tracked if p in read]


class SanitizedModule:
    """An instrumented kernel: `run(args)` returns the report rows that were hit and the writer tensors.
    `readers`: the tracked tensors with a reader shadow; `slots`: the int32 state the step checks keep."""

    def __init__(self, func: N.PrimFunc, executable, sites: list[Site], tracked: list[N.Buffer],
                 readers: list[N.Buffer] = (), slots: int = 0):
        self.func = func
        self.sites = sites
        self.tracked = tracked
        self.readers = list(readers)
        self.slots = slots
        self._fn = executable[func.name]

    def run(self, args: list) -> tuple[list[tuple[Site, list[int]]], dict]:
        """Run on the kernel's arguments (torch CPU tensors and scalars, in parameter order)."""
        import torch

        tensors = {p: a for p, a in zip(self.func.params, args) if isinstance(p, N.Buffer)}
        writers = {p: zeros_aligned(tuple(tensors[p].shape)) for p in self.tracked}
        readers = [zeros_aligned(tuple(tensors[p].shape)) for p in self.readers]
        state = torch.zeros((max(self.slots, 1),), dtype=torch.int32)
        report = torch.zeros((max(len(self.sites), 1), len(COLUMNS)), dtype=torch.int32)
        self._fn(*args, *writers.values(), *readers, state, report)
        hits = [(site, report[k].tolist()) for k, site in enumerate(self.sites) if int(report[k, 0])]
        return hits, writers


def zeros_aligned(shape: tuple):
    """An int32 zero tensor whose data is 64-byte aligned, as the LLVM code assumes (its vector loads fault
    otherwise). numpy's zeros come from calloc, with no fill pass: torch's parallel fill cost more than the kernel."""
    import numpy
    import torch

    n = 1
    for d in shape:
        n *= d
    raw = numpy.zeros(n + 16, dtype=numpy.int32)
    start = (-raw.ctypes.data % 64) // 4
    return torch.from_numpy(raw[start:start + n].reshape(shape))
