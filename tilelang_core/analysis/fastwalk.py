"""A fast pre-order walk over the tile IR for the analysis (per-type field tables instead of
`dataclasses.fields` on every node); same order and children as `ir.visitor.walk`."""
from __future__ import annotations

import dataclasses

from ..ir import nodes as N

_NODE_TYPES = tuple(
    t for t in vars(N).values()
    if isinstance(t, type) and dataclasses.is_dataclass(t) and t not in (N.Buffer, N.PrimFunc)
)
_NODE_SET = frozenset(_NODE_TYPES)
_SCALAR_FIELDS = {"dtype", "name", "kind", "op", "num_stages", "order", "stage", "annotations", "sliced",
                  "transpose_a", "transpose_b", "policy", "clear_accum", "is_clear", "clear", "dim",
                  "dim_written", "reverse", "panel_size", "enable", "shape", "entries"}
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(t: type) -> tuple[str, ...]:
    names = _FIELDS.get(t)
    if names is None:
        skip = {"span", "buffer"} | (_SCALAR_FIELDS if t is not N.Const else {"dtype"})
        names = tuple(f.name for f in dataclasses.fields(t) if f.name not in skip)
        _FIELDS[t] = names
    return names


def kids(node) -> list:
    """Direct IR children of a node (expressions, statements, regions, axes)."""
    out = []
    names = _FIELDS.get(type(node)) or _fields(type(node))
    for name in names:
        v = getattr(node, name)
        tv = type(v)
        if tv is tuple:
            for x in v:
                if type(x) in _NODE_SET:
                    out.append(x)
        elif tv in _NODE_SET:
            out.append(v)
    return out


def walk(node):
    """Pre-order iteration over a node and all of its IR descendants."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(kids(n)))
