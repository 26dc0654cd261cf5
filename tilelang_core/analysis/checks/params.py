"""Parameter rules: an out_idx output the kernel reads before writing (the JIT allocates it fresh and
uninitialised), an out_idx output nothing writes, and a tensor written while blocks read parts of it that other
blocks write (an input updated in place)."""
from __future__ import annotations

from ...diagnostics import Related
from ...ir import nodes as N
from ...ir.arith import as_int
from ..fastwalk import walk
from ..walker import Ctx, kernel_rule, substitute
from .accesses import Access, launches, out_params, root
from .common import related_for
from .coverage import projection


@kernel_rule
def check_parameters(func: N.PrimFunc, ctx: Ctx) -> None:
    """out_idx outputs read first or never written; tensors updated in place across blocks."""
    per_launch = launches(func)
    items = [(la.launch, a) for la in per_launch for a in la.items if root(a.buffer).scope == "global"]
    eager = func.factory is not None and func.factory == func.name
    what = "a T.empty output" if eager else "an out_idx output"
    drop = "make it a T.Tensor parameter instead of T.empty" if eager else "drop it from out_idx"
    for p in out_params(func):
        mine = [(la, a) for la, a in items if root(a.buffer) is p]
        if not any(a.mode in ("write", "atomic", "opaque", "accum") for _, a in mine):
            ctx.emit("output-never-written",
                     f"{p.name} is {what}, so each call returns a freshly allocated, uninitialised tensor for it, "
                     f"but nothing in the kernel writes {p.name}; write the result into it (e.g. "
                     f"T.copy(tile, {p.name}[...])) or {drop}",
                     p.span or ctx.func.span, related=())
            continue
        first = mine[0][1] if mine else None
        if first is not None and first.mode in ("read", "atomic", "accum"):
            how = ("T.atomic_add adds to its current contents" if first.mode == "atomic"
                   else "it is read here before any write")
            ctx.emit("output-read-before-write",
                     f"{p.name} is {what}, so the JIT allocates it fresh (torch.empty: uninitialised) on every "
                     f"call, but {how}; pass {p.name} in (zeroed if it accumulates): {drop}; or write it before "
                     f"reading it",
                     first.span, related=related_for(p))
    for la in per_launch:
        _inplace(la, ctx)


def _inplace(la, ctx: Ctx) -> None:
    """Report the first tensor of a launch that `inplace_hit` finds."""
    by: dict = {}
    for a in la.items:
        r = root(a.buffer)
        if r.scope == "global" and a.axes is not None:
            by.setdefault(r, []).append(a)
    for tensor, accs in by.items():
        found = inplace_hit(la, accs)
        if found is not None:
            w, hit, v = found
            ctx.emit("inplace-hazard",
                     f"{tensor.name} is written here at a position that follows {v.name}, and also read "
                     f"(see related) at positions that do not: a block may read elements another block has "
                     f"already overwritten, so the result depends on block order; write into a separate "
                     f"output tensor",
                     w.span, related=(Related(hit.span, f"{tensor.name} read here"),) + related_for(tensor))
            return


def inplace_hit(la, accs: list) -> tuple | None:
    """(write, read, block index) when a tensor the launch reads first (an input) is also plainly written at a
    position that follows a block index that a read of it does not follow: blocks read elements that other blocks
    overwrite. `accs`: the launch's accesses of the tensor, in program order. A tensor the launch writes first
    and reads back is the cross-block-read rule's."""
    writes = [a for a in accs if a.mode == "write"]
    reads = [a for a in accs if a.mode == "read"]
    if not writes or not reads or accs[0].mode != "read":
        return None
    grid = [v for v, g in zip(la.launch.block_vars, la.launch.grid) if not _is_one(g)]
    for w in writes:
        wdeps = _block_deps(w)
        hit = next((r for r in reads for v in grid if v in wdeps and v not in _block_deps(r)
                    and _no_load(r) and _may_meet(la.launch, w, r)), None)
        if hit is not None:
            return w, hit, next(v for v in grid if v in wdeps and v not in _block_deps(hit))
    return None


def _may_meet(launch: N.Launch, w: Access, r: Access) -> bool:
    """False when some axis proves the read and the written regions (over the whole grid) disjoint."""
    if len(w.axes) != len(r.axes):
        return True
    for axis in range(len(w.axes)):
        ws, rs = projection(launch, w, axis), projection(launch, r, axis)
        if ws is not None and rs is not None and not any(a.lo <= b.hi and b.lo <= a.hi for a in ws for b in rs):
            return False
    return True


def _is_one(g) -> bool:
    return as_int(g) == 1


def _block_deps(a: Access) -> set:
    out = set()
    for s, _ in a.axes:
        for n in walk(substitute(s, a.lets)):
            if isinstance(n, N.Var) and n.kind == "block":
                out.add(n)
    for f in a.loops:
        if isinstance(f, N.For):
            for e in (*f.starts, *f.extents):
                out |= {n for n in walk(substitute(e, a.lets)) if isinstance(n, N.Var) and n.kind == "block"}
    return out


def _no_load(a: Access) -> bool:
    return not any(isinstance(n, N.Load) or isinstance(n, N.Var) and n.kind == "let"
                   for s, _ in a.axes for n in walk(substitute(s, a.lets)))
