"""Hint builtins that move no data: `T.annotate_safe_value({A: v})` (the value reads outside tensor A give, written
as a Call the backends read through ir/safe_values.py) and `T.assume(cond)` (a fact the compiler may use, written
as `Call("assume", (cond, Const(text, "str")))`: the backends run nothing for it, and a condition over the launch's
sizes and scalar arguments alone is checked when the kernel is called, runtime/assumptions.py) and `T.__ldg(x[i])`
(a load hinted to the read-only cache) and `T.annotate_l2_hit_ratio({A: r})` (keep fraction r of tensor A's
accesses in the persisting part of L2: `Call("annotate_l2_hit_ratio", (A's head element, r))`, which the CUDA launch
applies as the stream's access policy window, runtime/launch.py; nothing on the CPU)."""
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
        buf = _tensor_key(p, k, node, "T.annotate_safe_value")
        value = p.ev.scalar(v)
        if isinstance(value, N.Const):
            is_float = buf.dtype.startswith(("float", "bfloat"))
            value = N.Const(float(value.value) if is_float else int(value.value), buf.dtype, value.span)
        head = N.Load(buf, tuple(N.Const(0) for _ in buf.shape), p.span(k))
        p.emit(N.Evaluate(N.Call(CALL, (head, value), "int32", span), span))


def h_annotate_l2_hit_ratio(p, b, node, short):
    """T.annotate_l2_hit_ratio({tensor: ratio, ...}): one hint Call per global tensor, the ratio a number in [0, 1]."""
    mapping = b.get("l2_hit_ratio_map")
    if not isinstance(mapping, ast.Dict):
        raise KernelError("bad-arguments", "T.annotate_l2_hit_ratio takes a dict literal {tensor: hit ratio, ...}",
                          node)
    for k, v in zip(mapping.keys, mapping.values):
        buf = _tensor_key(p, k, node, "T.annotate_l2_hit_ratio")
        ratio = p.ev.eval(v)
        if isinstance(ratio, bool) or not isinstance(ratio, (int, float)) or not 0.0 <= ratio <= 1.0:
            raise KernelError("bad-arguments", f"the L2 hit ratio of `{buf.name}` must be a number from 0 to 1 known "
                              f"when the kernel is built; got `{ast.unparse(v)}`", v)
        head = N.Load(buf, tuple(N.Const(0) for _ in buf.shape), p.span(k))
        p.emit(N.Evaluate(N.Call("annotate_l2_hit_ratio", (head, N.Const(float(ratio), "float32")), "int32",
                                 p.span(node)), p.span(node)))


def _tensor_key(p, key, node, builtin: str) -> N.Buffer:
    """The global tensor a hint's dict key names (bad-arguments at the key otherwise; `**spread` has no key)."""
    buf = p.ev.eval(key) if key is not None else None
    if not isinstance(buf, N.Buffer) or buf.scope != "global":
        raise KernelError("bad-arguments", f"the keys of {builtin} are global tensors (kernel parameters); "
                          f"`{ast.unparse(key) if key is not None else '**'}` is not one", key or node)
    return buf


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


HINT_HANDLERS = {"annotate_safe_value": h_annotate_safe_value, "assume": h_assume, "__ldg": h_ldg,
                 "annotate_l2_hit_ratio": h_annotate_l2_hit_ratio}
