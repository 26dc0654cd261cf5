"""`T.all_of(region)` / `T.any_of(region)`: the and / or of every element of a buffer region (a whole buffer, a slice
`M[by, bx, k, :]`), written out element by element as one boolean expression; the region's extent must be known
at compile time."""
from __future__ import annotations

import itertools

from ..ir import nodes as N
from ..ir.arith import as_int
from .kernel_errors import KernelError

MAX_ELEMENTS = 4096


def h_region_predicate(p, b, node, short):
    """T.all_of / T.any_of(buffer or region) -> BoolOp over the region's elements."""
    from .regions import region_of

    if len(node.args) != 1 or node.keywords:
        raise KernelError("bad-arguments", f"T.{short} takes one buffer region, e.g. `T.{short}(mask[i, :])`", node)
    region = region_of(p, node.args[0])
    extents = [as_int(a.extent) if a.sliced else 1 for a in region.axes]
    if None in extents:
        raise KernelError("bad-arguments", f"T.{short} needs the extent of `{region.buffer.name}`'s region known at "
                          "compile time", node.args[0])
    total = 1
    for e in extents:
        total *= e
    if not 0 < total <= MAX_ELEMENTS:
        raise KernelError("bad-arguments", f"T.{short} of {total} elements: a region of 1 to {MAX_ELEMENTS} elements "
                          "is written out element by element", node.args[0])
    span = p.span(node)
    terms = []
    for offsets in itertools.product(*(range(e) for e in extents)):
        idx = tuple(N.BinOp("+", a.start, N.Const(o)) if o else a.start for a, o in zip(region.axes, offsets))
        load = N.Load(region.buffer, idx, span)
        terms.append(load if region.buffer.dtype == "bool" else N.Compare("!=", load, N.Const(0, region.buffer.dtype)))
    return terms[0] if len(terms) == 1 else N.BoolOp("and" if short == "all_of" else "or", tuple(terms), span)


REGION_PREDICATE_HANDLERS = {"all_of": h_region_predicate, "any_of": h_region_predicate}
