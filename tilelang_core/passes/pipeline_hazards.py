"""Prefetch hazards of planned T.Pipelined loops: the CUDA path issues each producer copy of `passes.plan`
num_stages - 1 iterations ahead of the consumers, so a producer that reads what the loop body writes in an earlier
iteration (global memory it stores into, or an index held in a variable it updates) reads the old value. The CPU
backend runs the loop in order and hides both."""
from __future__ import annotations

from ..analysis.bounds import Interval, bound
from ..analysis.checks.accesses import access_env, root
from ..analysis.fastwalk import walk
from ..analysis.walker import substitute
from ..diagnostics import Related
from ..ir import nodes as N
from .plan import plan_pipelines

WRITES = ("write", "accum", "atomic", "opaque")


def pipeline_hazards(func: N.PrimFunc, acc, emit) -> None:
    """Report the producers of each planned pipeline of one launch (`acc`: its accesses) that read what the loop
    writes; `emit(code, message, span, related)`."""
    if not _candidates(acc):
        return
    for plan in plan_pipelines(func).values():
        loop = plan.loop
        producers = {id(p) for p in plan.producers}
        inside = [a for a in acc.items if any(f is loop for f in a.loops)]
        writes = [a for a in inside if a.mode in WRITES and id(a.op) not in producers]
        if not writes:
            continue
        for p in plan.producers:
            reads = [a for a in inside if a.op is p and a.mode == "read"]
            _stale_index(p, writes, plan, emit) or _stale_source(p, reads, writes, plan, emit)


def _candidates(acc) -> bool:
    """True when some copy inside a T.Pipelined loop of more than one stage reads a tensor, or indexes with memory,
    that the loop also writes (the plan, which is costlier, is only made then)."""
    for a in acc.items:
        if a.mode != "read" or not isinstance(a.op, N.Copy) or a.op.src.buffer is not a.buffer:
            continue
        loops = [f for f in a.loops if isinstance(f, N.For) and f.kind == "pipelined" and (f.num_stages or 0) > 1]
        if not loops:
            continue
        loaded = {id(root(n.buffer)) for ax in a.op.src.axes for n in walk(ax.start) if isinstance(n, N.Load)}
        watched = loaded | ({id(root(a.buffer))} if root(a.buffer).scope == "global" else set())
        if any(w.mode in WRITES and w.op is not a.op and id(root(w.buffer)) in watched and loops[-1] in w.loops
               for w in acc.items):
            return True
    return False


def _stale_index(p: N.Copy, writes, plan, emit) -> bool:
    """A producer whose source index reads a variable or tile the loop body writes."""
    written = {id(root(w.buffer)): w for w in writes if root(w.buffer).scope != "global"}
    for ax in p.src.axes:
        for n in walk(ax.start):
            w = written.get(id(root(n.buffer))) if isinstance(n, N.Load) else None
            if w is None:
                continue
            v, ns = plan.loop.vars[0].name, plan.num_stages
            emit("pipeline-prefetch-hazard",
                 f"this copy is prefetched {ns - 1} iteration{'s' if ns > 2 else ''} ahead (T.Pipelined, num_stages="
                 f"{ns}), but its index reads {n.buffer.name}, which the loop body sets at line {_line(w)}: the "
                 f"prefetch for iteration {v} + {ns - 1} uses the value of an earlier iteration; index the copy with "
                 f"{v} itself (read the table inside the copy's index), or use num_stages=1",
                 n.span or p.src.span or p.span, (Related(w.span, f"{n.buffer.name} is set here"),) if w.span else ())
            return True
    return False


def _stale_source(p: N.Copy, reads, writes, plan, emit) -> bool:
    """A producer reading global elements the loop body writes in one of the iterations it runs ahead of."""
    src = root(p.src.buffer)
    for w in writes:
        if root(w.buffer) is not src or w.axes is None:
            continue
        for r in reads:
            d = _ahead_overlap(r, w, plan)
            if d is None:
                continue
            v, ns = plan.loop.vars[0].name, plan.num_stages
            emit("pipeline-prefetch-hazard",
                 f"this copy of {src.name} is issued {ns - 1} iteration{'s' if ns > 2 else ''} ahead (T.Pipelined, "
                 f"num_stages={ns}), but the loop body writes the elements it reads for iteration {v} + {d} at line "
                 f"{_line(w)}, during iteration {v}: the prefetch reads them before they are written; carry the value "
                 f"to the next iteration in a fragment or shared tile instead of through {src.name}, or use "
                 f"num_stages=1",
                 r.span or p.span, (Related(w.span, f"{src.name} is written here"),) if w.span else ())
            return True
    return False


def _ahead_overlap(r, w, plan) -> int | None:
    """The smallest d in 1 .. num_stages - 1 such that read `r` at iteration k + d touches what write `w` writes at
    iteration k (the same block), or None when it never does or that cannot be told."""
    loop = plan.loop
    v = loop.vars[0]
    start = bound(loop.starts[0], {})
    k0 = (start.lo if start is not None and start.lo == start.hi else 0) + 1
    blocks = {b: Interval.point(1) for b in _block_vars(r) + _block_vars(w)}
    for d in range(1, plan.num_stages):
        wbox = _box(w, {**blocks, v: Interval.point(k0)})
        rbox = _box(r, {**blocks, v: Interval.point(k0 + d)})
        if wbox is None or rbox is None:
            return None
        if all(a0 <= b1 and b0 <= a1 for (a0, a1), (b0, b1) in zip(wbox, rbox)):
            return d
    return None


def _block_vars(a) -> list:
    """The block index variables of the launch an access belongs to."""
    return [n for s, _ in (a.axes or ()) for n in walk(substitute(s, a.lets))
            if isinstance(n, N.Var) and n.kind == "block"]


def _box(a, fixed: dict) -> list | None:
    """Per axis, [lo, hi] of the elements access `a` touches with the variables in `fixed` held at those values."""
    env = access_env(a, {})
    if env is None:
        return None
    env.update(fixed)
    out = []
    for start, ext in a.axes:
        s, n = bound(substitute(start, a.lets), env), bound(substitute(ext, a.lets), env)
        if s is None or n is None:
            return None
        out.append((s.lo, s.hi + n.hi - 1))
    return out


def _line(a) -> str:
    return str(a.span.line) if a.span is not None else "?"

