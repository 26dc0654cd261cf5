"""The `memory_order` of an atomic builtin: one of C++'s six orders, and one the operation can have (TileLang's
rule: a load cannot release, a store cannot acquire or consume)."""
from __future__ import annotations

import ast

from .kernel_errors import KernelError
from .signatures import registry_entry

ORDERS = ("relaxed", "consume", "acquire", "release", "acq_rel", "seq_cst")
ALLOWED = {"atomic_load": ("relaxed", "consume", "acquire", "seq_cst"),
           "atomic_store": ("relaxed", "release", "seq_cst")}


def check_memory_order(p, name: str, short: str, node: ast.Call) -> None:
    """KernelError (invalid-memory-order) when the call's constant memory_order is not one the builtin can have."""
    given = _order_node(name, node)
    if given is None:
        return
    order = p.ev.eval(given)
    if not isinstance(order, str):
        return
    allowed = ALLOWED.get(short, ORDERS)
    if order not in allowed:
        listed = ", ".join(repr(o) for o in allowed)
        raise KernelError("invalid-memory-order", f"T.{short} does not support memory_order {order!r}; use one of "
                          f"{listed}", given)


def _order_node(name: str, node: ast.Call):
    """The argument node given for `memory_order` (keyword, or positional by the builtin's signature)."""
    for kw in node.keywords:
        if kw.arg == "memory_order":
            return kw.value
    entry = registry_entry(name)
    names = [q.name for q in entry.params] if entry is not None else []
    at = names.index("memory_order") if "memory_order" in names else None
    return node.args[at] if at is not None and at < len(node.args) else None
