"""The source text of an ast expression node, as messages and labels show it (long ones abbreviated)."""
from __future__ import annotations

import ast

TEXT_CHARS = 200  # longer expressions are abbreviated: unparsing every level of a deep one is quadratic


def node_text(node) -> str:
    """The source text of an expression node for messages and labels (`?` for None or what cannot be unparsed);
    a node over TEXT_CHARS characters or several lines is shown as `f(...)` (a call) or `(...)`."""
    if node is None:
        return "?"
    end_line, end_col = getattr(node, "end_lineno", None), getattr(node, "end_col_offset", None)
    if end_line is not None and (end_line > node.lineno or end_col - node.col_offset > TEXT_CHARS):
        return f"{node_text(node.func)}(...)" if isinstance(node, ast.Call) else "(...)"
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001
        return "?"
