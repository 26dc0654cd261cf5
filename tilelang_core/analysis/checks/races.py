"""Cross-block races: plain (non-atomic) stores to a global tensor whose target is the same for every block along
a grid axis of extent > 1 (the blocks differ in what they compute, so the last one wins), or whose tiles overlap
between neighbouring blocks."""
from __future__ import annotations

from ...diagnostics import Related
from ...ir import nodes as N
from ...ir.arith import as_int
from ..bounds import Interval, bound, mentions
from ..fastwalk import walk
from ..walker import Ctx, kernel_rule, substitute
from .accesses import Access, access_env, grid_env, has_load, launches, root
from .common import related_for


@kernel_rule
def check_cross_block_races(func: N.PrimFunc, ctx: Ctx) -> None:
    """Non-atomic global writes that several blocks make to the same elements."""
    for acc in launches(func):
        _launch(acc, ctx)


def _launch(acc, ctx: Ctx) -> None:
    launch = acc.launch
    axes = [(v, as_int(g)) for v, g in zip(launch.block_vars, launch.grid) if (as_int(g) or 0) > 1]
    if not axes:
        return
    content = None  # traced only when some write ignores a block index
    reported: set = set()
    for a in acc.items:
        if a.mode != "write" or root(a.buffer).scope != "global" or a.axes is None or id(a.op) in reported:
            continue
        deps = _deps(a)
        if deps is None:
            continue
        varies = None
        for v, n in axes:
            if v in deps:
                continue
            if varies is None:
                content = _contents(acc) if content is None else content
                varies = _value_deps(a, content)
            if varies is not ANY and v not in varies:
                continue  # every block along v writes the same value
            reported.add(id(a.op))
            _report_same(a, v, n, launch, ctx)
            break
        else:
            if _overlap(a, launch, deps, ctx):
                reported.add(id(a.op))


def _deps(a: Access) -> set | None:
    """The block indices the written region (its indices, enclosing loops and guards) depends on; None when it
    depends on values read from memory or on a runtime loop."""
    exprs = [substitute(s, a.lets) for s, _ in a.axes]
    exprs += [substitute(g, a.lets) for g in a.guards]
    for f in a.loops:
        if isinstance(f, N.While):
            return None
        exprs += [substitute(e, a.lets) for e in (*f.starts, *f.extents)]
    if any(has_load(e) for e in exprs):
        return None
    out = set()
    for e in exprs:
        for n in walk(e):
            if isinstance(n, N.Var):
                if n.kind == "let" or n.kind == "dynamic":
                    return None  # a name whose value the let chain did not reach
                if n.kind == "block":
                    out.add(n)
    return out


ANY = frozenset({"any"})  # depends on something the analysis does not follow (memory it does not model)


def _vars_of(e, lets) -> frozenset:
    e = substitute(e, lets)
    if any(isinstance(n, N.Var) and n.kind in ("let", "dynamic") for n in walk(e)):
        return ANY
    return frozenset(n for n in walk(e) if isinstance(n, N.Var) and n.kind == "block")


def _union(*sets) -> frozenset:
    return ANY if any(s is ANY for s in sets) else frozenset().union(*sets)


def _expr_deps(e, lets, content: dict) -> frozenset:
    """Block indices an expression's value depends on: its own, and those of the memory its loads read."""
    out = [_vars_of(e, lets)]
    for n in walk(e):
        if isinstance(n, N.Load):
            out.append(content.get(root(n.buffer), frozenset()))
            out += [_vars_of(i, lets) for i in n.indices]
    return _union(*out)


def _contents(acc) -> dict:
    """Root buffer -> the block indices its contents depend on (ANY when unknown), to a fixed point over the
    launch's writes. Tensors the kernel only reads hold the same data for every block."""
    content: dict = {}
    writes = [a for a in acc.items if a.mode != "read"]
    for _ in range(6):
        changed = False
        for a in writes:
            r = root(a.buffer)
            new = _union(content.get(r, frozenset()), _value_deps(a, content), _position_deps(a))
            if new != content.get(r, frozenset()):
                content[r], changed = new, True
        if not changed:
            return content
    return {r: ANY for r in content}


def _position_deps(a: Access) -> frozenset:
    exprs = [s for s, _ in a.axes] if a.axes is not None else []
    exprs += list(a.guards) + [e for f in a.loops if isinstance(f, N.For) for e in (*f.starts, *f.extents)]
    if any(isinstance(f, N.While) for f in a.loops):
        return ANY
    return _union(frozenset(), *(_expr_deps(e, a.lets, {}) for e in exprs))


def _value_deps(a: Access, content: dict) -> frozenset:
    """Block indices the value a write stores depends on."""
    op = a.op
    if a.mode == "opaque":  # an intrinsic's output follows its operands (every load and index in the call)
        value = getattr(op, "value", None)
        return _expr_deps(value, a.lets, content) if value is not None and not isinstance(value, N.Region) else ANY
    if isinstance(op, (N.Store, N.Fill)):
        return _expr_deps(op.value, a.lets, content)
    if isinstance(op, N.Copy):
        src = a.source
        return _union(content.get(root(op.src.buffer), frozenset()), _position_deps(src) if src else ANY)
    if isinstance(op, N.AtomicAdd):
        v = op.value
        return content.get(root(v.buffer), frozenset()) if isinstance(v, N.Region) else _expr_deps(v, a.lets, content)
    regions = {N.Gemm: ("a", "b", "c"), N.Reduce: ("src", "dst"), N.CumSum: ("src", "dst")}.get(type(op), ())
    return _union(frozenset(), *(content.get(root(getattr(op, f).buffer), frozenset()) for f in regions))


def _report_same(a: Access, v, n: int, launch: N.Launch, ctx: Ctx) -> None:
    related = (Related(launch.span, f"{v.name} runs over {n} blocks here"),) if launch.span else ()
    ctx.emit("cross-block-race",
             f"all {n} blocks along {v.name} write this region of {a.buffer.name} (its position does not depend on "
             f"{v.name}) with different values, so the result depends on which block writes last; index the "
             f"output with {v.name}, or accumulate with T.atomic_add into a zeroed tensor",
             a.span, related=related + related_for(root(a.buffer)))


def _overlap(a: Access, launch: N.Launch, deps: set, ctx: Ctx) -> bool:
    """Tiles of neighbouring blocks along one grid axis that overlap (copies only: their extent is exact)."""
    if not isinstance(a.op, N.Copy) or a.guards or len(deps) != 1:
        return False
    b = next(iter(deps))
    grid = grid_env(launch)
    if b not in grid or grid[b].hi < 1:
        return False
    env = access_env(a, grid)
    if env is None:
        return False
    for axis, (start, ext) in enumerate(a.axes):
        s = substitute(start, a.lets)
        e, dim = as_int(ext), as_int(a.buffer.shape[axis]) if axis < len(a.buffer.shape) else None
        if not mentions(s, {b}) or e is None or dim is None:
            continue
        at0, at1 = bound(s, {**env, b: Interval.point(0)}), bound(s, {**env, b: Interval.point(1)})
        if at0 is None or at1 is None or at0.lo != at0.hi or at1.lo != at1.hi:
            return False
        step = at1.lo - at0.lo
        if 0 < step < e and at1.lo < dim:
            related = (Related(launch.span, "the grid is set here"),) if launch.span else ()
            ctx.emit("cross-block-race",
                     f"neighbouring blocks along {b.name} write overlapping tiles of {a.buffer.name}: each tile is {e} "
                     f"wide in dimension {axis} but the blocks are {step} apart, so {e - step} elements are written by "
                     f"two blocks and the last one wins; step the offset by the tile extent ({b.name} * {e})",
                     a.span, related=related + related_for(root(a.buffer)))
            return True
    return False
