"""The value a read outside a global tensor gives, per tensor: 0 unless `T.annotate_safe_value({A: v})` says v.

The frontend writes the annotation as `Evaluate(Call("annotate_safe_value", (Load(A, (0, ...)), value)))`; the
backends read the table once per kernel."""
from __future__ import annotations

from . import nodes as N
from .visitor import walk

CALL = "annotate_safe_value"


def safe_values(body) -> dict:
    """Global tensor -> the expression its out-of-bounds reads give (the last annotation of a tensor wins)."""
    return {n.args[0].buffer: n.args[1] for n in walk(body) if isinstance(n, N.Call) and n.name == CALL}
