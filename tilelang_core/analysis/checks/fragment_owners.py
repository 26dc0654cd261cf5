"""A T.Parallel loop whose `loop_layout` runs an iteration on threads that do not hold the fragment element it writes:
with both thread maps fixed by the user (the loop's T.Fragment and the buffer's T.annotate_layout one, built on the
host), layout inference has no choice left, and TileLang rejects the kernel ("Layout infer conflict")."""
from __future__ import annotations

import itertools

from ...diagnostics import Related
from ...ir import nodes as N
from ...ir.arith import shape_ints
from ..fastwalk import walk
from ..walker import Ctx, rule
from .common import related_for


@rule(N.For)
def check_loop_layout_owners(f: N.For, ctx: Ctx) -> None:
    """A fragment write in a T.Parallel loop with a loop_layout, from a thread that does not hold the element."""
    spec = dict(f.annotations).get("loop_layout")
    extents = shape_ints(f.extents)
    if f.kind != "parallel" or spec is None or spec.owners is None or extents != tuple(spec.shape):
        return
    held = _annotated_owners(ctx.launch.body if ctx.launch is not None else ctx.func.body)
    for store in (n for n in walk(f.body) if isinstance(n, N.Store) and n.buffer in held):
        if not all(i in f.vars for i in store.indices) or shape_ints(store.buffer.shape) is None:
            continue  # only an element named by the loop's own variables is checked
        conflict = _first_conflict(f, spec.owners, store, held[store.buffer])
        if conflict is not None:
            point, runners, element, owners = conflict
            name = store.buffer.name
            ctx.emit("layout-infer-conflict",
                     f"Layout infer conflict: the loop_layout of this T.Parallel runs iteration {point} on threads "
                     f"{sorted(runners)}, but {name}{list(element)} is held by threads {sorted(owners)} (its "
                     f"T.annotate_layout fragment), and a thread can only write the elements it holds; give the loop "
                     f"a layout whose threads for each iteration hold the element it writes, or drop loop_layout",
                     store.span, related=((Related(spec.span, "the loop's layout"),) if spec.span else ())
                     + related_for(store.buffer))


def _annotated_owners(body) -> dict:
    """Fragment buffer -> the threads holding each of its elements (row-major), from T.annotate_layout."""
    return {buf: spec.owners for a in walk(body) if isinstance(a, N.AnnotateLayout)
            for buf, spec in a.entries if spec.owners is not None and buf.scope == "local.fragment"}


def _first_conflict(f: N.For, runs, store: N.Store, owners):
    """(iteration, its threads, element, the element's threads) of the first write from a non-owner, or None."""
    shape = shape_ints(store.buffer.shape)
    for point, runners in zip(itertools.product(*(range(e) for e in shape_ints(f.extents))), runs):
        env = dict(zip(f.vars, point))
        element = tuple(env[i] for i in store.indices)
        flat = 0
        for k, size in zip(element, shape):
            flat = flat * size + k
        if flat < len(owners) and not runners <= owners[flat]:
            return point, runners, element, owners[flat]
    return None
