"""A fragment read or written at a constant non-zero index inside a T.Parallel loop when nothing else gives it a
layout: TileLang then replicates it on every thread, which only works for element 0, and rejects the loop."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.printer import expr_str
from ..fastwalk import walk
from ..walker import Ctx, rule
from .common import related_for

CODE = "fragment-constant-index"
_last: list = [None, frozenset()]  # (func, its fragments laid out elsewhere): the rule runs per loop of one func


@rule(N.For)
def check_fragment_constant_index(f: N.For, ctx: Ctx) -> None:
    """One error per outermost T.Parallel nest, at its first constant non-zero index of such a fragment."""
    if f.kind != "parallel" or ctx.parallel:
        return
    laid_out = _laid_out_elsewhere(ctx.func)
    for n in walk(f):
        if not isinstance(n, (N.Load, N.Store)) or n.buffer.scope != "local.fragment" or n.buffer in laid_out:
            continue
        bad = next((v for v in map(as_int, n.indices) if v not in (None, 0)), None)
        if bad is not None:
            name = n.buffer.name
            ctx.emit(CODE, f"fragment {name} is accessed as {name}[{', '.join(expr_str(i) for i in n.indices)}] "
                           f"inside a T.Parallel loop, but no tile op, T.annotate_layout or loop-variable index gives "
                           f"it a layout, so it is replicated on every thread: Only fragment[0] access is allowed "
                           f"within T.Parallel loop. Index {name} with the loop variable, or use {name}[0]",
                     n.span or f.span, related=related_for(n.buffer))
            return


def _laid_out_elsewhere(func: N.PrimFunc) -> frozenset:
    """Fragments something other than constant-index accesses lays out: tile-op operands, T.annotate_layout
    entries, call arguments, views and their bases, and fragments indexed by a variable anywhere."""
    if _last[0] is func:
        return _last[1]
    found: set = set()
    for n in walk(func.body) if func.body is not None else ():
        if isinstance(n, N.Region):
            found.add(n.buffer)
        elif isinstance(n, N.AnnotateLayout):
            found.update(buf for buf, _ in n.entries)
        elif isinstance(n, N.Call):
            found.update(a.buffer for a in n.args if isinstance(a, (N.Load, N.Region)))
        elif isinstance(n, (N.Load, N.Store)):
            if n.buffer.base is not None:
                found.update((n.buffer, n.buffer.base))
            elif any(as_int(i) is None for i in n.indices):
                found.add(n.buffer)
    _last[:] = [func, frozenset(found)]
    return _last[1]

