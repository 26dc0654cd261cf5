"""The thread of every element of a `T.Fragment(shape, forward_fn=...)` given to T.annotate_layout, when the index
function is a lambda of integer arithmetic or a plain Python function of the running program (None otherwise): what
the reduction checks need to know which threads combine an output. A fragment the running program built on the
host (a LiveLayout) gives every element's threads over its replicas too, for the owner checks."""
from __future__ import annotations

import ast
import itertools
import operator

from ..ir import nodes as N
from ..ir.arith import as_const
from .values import LiveFunc

MAX_ELEMENTS = 4096  # larger fragments are not enumerated (their reductions go unchecked): parsing stays cheap
_OPS = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.FloorDiv: operator.floordiv,
        ast.Mod: operator.mod}


def fragment_threads(p, fn_node, shape) -> tuple[int, ...] | None:
    """The thread of each element of `shape` (row-major) under the forward function at `fn_node`."""
    if fn_node is None or shape is None or not shape or _count(shape) > MAX_ELEMENTS:
        return None
    if isinstance(fn_node, ast.Lambda):
        if len(fn_node.args.args) != len(shape):  # a replicated fragment's (i, rep) form: no single thread
            return None
        names = [a.arg for a in fn_node.args.args]
        call = lambda idx: _eval(p, fn_node.body, dict(zip(names, idx)))  # noqa: E731
    else:
        live = p.ev.eval(fn_node)
        if not isinstance(live, LiveFunc):
            return None
        call = live.pyfunc
    out = []
    for idx in itertools.product(*(range(d) for d in shape)):
        try:
            res = call(*idx) if not isinstance(fn_node, ast.Lambda) else call(idx)
        except Exception:  # noqa: BLE001 - a function we cannot evaluate here: no map, no check
            return None
        thread = res[0] if isinstance(res, (tuple, list)) and res else None
        if not isinstance(thread, int) or isinstance(thread, bool):
            return None
        out.append(thread)
    return tuple(out)


def host_layout_spec(live, span) -> N.LayoutSpec:
    """The LayoutSpec of a layout built on the host: a T.Fragment's thread of each element (when not replicated) and
    its threads over the replicas, evaluated when it has at most MAX_ELEMENTS elements; a T.Layout's shape."""
    layout = live.layout
    shape = tuple(layout.shape)
    if not hasattr(layout, "threads"):
        return N.LayoutSpec("layout", shape, span)
    if _count(shape) > MAX_ELEMENTS:
        return N.LayoutSpec("fragment", shape, span)
    try:
        grid = layout.threads()[0].reshape(_count(shape), -1)
    except Exception:  # noqa: BLE001 - a forward function the host cannot evaluate: no map, no check
        return N.LayoutSpec("fragment", shape, span)
    owners = tuple(frozenset(int(t) for t in row) for row in grid)
    threads = tuple(int(row[0]) for row in grid) if grid.shape[1] == 1 else None
    return N.LayoutSpec("fragment", shape, span, threads, owners)


def _count(shape) -> int:
    total = 1
    for d in shape:
        total *= d
    return total


def _eval(p, node, names: dict):
    """An integer-arithmetic expression of the lambda's parameters and the program's integer constants."""
    if isinstance(node, ast.Tuple):
        return tuple(_eval(p, e, names) for e in node.elts)
    if isinstance(node, ast.Constant) and isinstance(node.value, int):
        return node.value
    if isinstance(node, ast.Name):
        value = names[node.id] if node.id in names else p.ev.eval(node)
        value = as_const(value) if isinstance(value, N.Const) else value
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    if isinstance(node, ast.BinOp) and type(node.op) in _OPS:
        return _OPS[type(node.op)](_eval(p, node.left, names), _eval(p, node.right, names))
    raise ValueError(f"not integer arithmetic: {ast.dump(node)[:60]}")
