"""Generic traversal of the tile IR: children of a node, flattened statement lists, pre-order walk, and a rebuilding
transformer."""
from __future__ import annotations

import dataclasses
from typing import Callable, Iterator

from . import nodes as N


_FIELDS: dict = {}      # node type -> its field names but "span"
_NODE_TYPE: dict = {}   # value type -> whether values of it are IR nodes


def children(node) -> Iterator:
    """Direct IR children of a node: expressions, statements, regions and axes (never spans or buffers)."""
    return iter(_kids(node))


def _kids(node) -> list:
    names = _FIELDS.get(type(node))
    if names is None:
        names = _FIELDS[type(node)] = tuple(f.name for f in dataclasses.fields(node) if f.name != "span")
    out = []
    for name in names:
        value = getattr(node, name)
        if isinstance(value, tuple):
            out.extend(v for v in value if _is_node(v))
        elif _is_node(value):
            out.append(value)
    return out


def _is_node(v) -> bool:
    """A dataclass instance other than a Buffer (decided once per type)."""
    t = type(v)
    hit = _NODE_TYPE.get(t)
    if hit is None:
        hit = _NODE_TYPE[t] = dataclasses.is_dataclass(t) and not issubclass(t, N.Buffer)
    return hit


def flat_stmts(stmt) -> list:
    """The statements of `stmt` in order, nested SeqStmts flattened (`[]` for None)."""
    if stmt is None:
        return []
    return [x for st in stmt.stmts for x in flat_stmts(st)] if isinstance(stmt, N.SeqStmt) else [stmt]


def walk(node) -> Iterator:
    """Pre-order walk over a node and all of its IR descendants."""
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(_kids(n)))


def transform(node, fn: Callable):
    """Rebuild a tree bottom-up: `fn(new_node)` may return a replacement (or the node unchanged)."""
    if not _is_node(node) or isinstance(node, (N.Var,)):
        return fn(node) if _is_node(node) else node
    changes = {}
    for f in dataclasses.fields(node):
        if f.name == "span":
            continue
        value = getattr(node, f.name)
        if isinstance(value, tuple) and any(_is_node(v) for v in value):
            new = tuple(transform(v, fn) if _is_node(v) else v for v in value)
            if any(a is not b for a, b in zip(new, value)):
                changes[f.name] = new
        elif _is_node(value) and not isinstance(value, N.Buffer):
            new = transform(value, fn)
            if new is not value:
                changes[f.name] = new
    if changes:
        node = dataclasses.replace(node, **changes)
    return fn(node)


def op_regions(op) -> tuple[list, list]:
    """(read regions, written regions) of a tile op."""
    if isinstance(op, N.Copy):
        return [op.src], [op.dst]
    if isinstance(op, N.Gemm):
        return [op.a, op.b, op.c], [op.c]
    if isinstance(op, N.Fill):
        return [], [op.dst]
    if isinstance(op, N.Reduce):
        return [op.src] + ([] if op.clear else [op.dst]), [op.dst]
    if isinstance(op, N.CumSum):
        return [op.src], [op.dst]
    if isinstance(op, N.AtomicAdd):
        return ([op.value] if isinstance(op.value, N.Region) else []), [op.dst]
    return [], []
