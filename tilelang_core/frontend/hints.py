"""Hint builtins that move no data: `T.annotate_safe_value({A: v})` (the value reads outside tensor A give, written
as a Call the backends read through ir/safe_values.py) and `T.assume(cond)` (a fact the compiler may use, written
as `Call("assume", (cond, Const(text, "str")))`: the backends run nothing for it, and a condition over the launch's
sizes and scalar arguments alone is checked when the kernel is called, runtime/assumptions.py) and `T.__ldg(x[i])`
(a load hinted to the read-only cache)."""
from __future__ import annotations

import ast

from ..ir import nodes as N
from ..ir.safe_values import CALL
from .kernel_errors import KernelError


def h_annotate_safe_value(p, b, node, short):
    """T.annotate_safe_value({tensor: value, ...}): one annotation Call per global tensor."""
    mapping = b.get("safe_value_map")
    if not isinstance(mapping, ast.Dict):
        raise KernelError("bad-arguments", "T.annotate_safe_value takes a dict literal {tensor: value, ...}", node)
    span = p.span(node)
    for k, v in zip(mapping.keys, mapping.values):
        buf = p.ev.eval(k) if k is not None else None
        if not isinstance(buf, N.Buffer) or buf.scope != "global":
            raise KernelError("bad-arguments", "the keys of T.annotate_safe_value are global tensors (kernel "
                              f"parameters); `{ast.unparse(k) if k is not None else '**'}` is not one", k or node)
        value = p.ev.scalar(v)
        if isinstance(value, N.Const):
            is_float = buf.dtype.startswith(("float", "bfloat"))
            value = N.Const(float(value.value) if is_float else int(value.value), buf.dtype, value.span)
        head = N.Load(buf, tuple(N.Const(0) for _ in buf.shape), p.span(k))
        p.emit(N.Evaluate(N.Call(CALL, (head, value), "int32", span), span))


def h_assume(p, b, node, short):
    """T.assume(cond): a Call carrying the condition and its source text."""
    if b.get("cond") is None:
        return
    cond = p.ev.scalar(b["cond"])
    text = N.Const(ast.unparse(b["cond"]), "str")
    p.emit(N.Evaluate(N.Call("assume", (cond, text), "int32", p.span(node)), p.span(node)))


def h_ldg(p, b, node, short):
    """T.__ldg(buf[i]): the element, read through the read-only data cache on CUDA: Call("__ldg", (Load,))."""
    value = p.ev.eval(node.args[0]) if len(node.args) == 1 else None
    if not isinstance(value, N.Load) or value.buffer.scope != "global":
        raise KernelError("bad-arguments", "T.__ldg reads one element of a global tensor (`x[i]`)", node)
    return N.Call("__ldg", (value,), value.buffer.dtype, p.span(node))


HINT_HANDLERS = {"annotate_safe_value": h_annotate_safe_value, "assume": h_assume, "__ldg": h_ldg}
