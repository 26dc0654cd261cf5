"""KernelError, the diagnostic a kernel statement raises, and the checks of constant values no kernel can
have: sizes and counts, literals, shift amounts, element counts.
"""
from __future__ import annotations

import ast

from ..ir import nodes as N
from ..ir.arith import as_const
from .expr_info import expr_dtype, int_bits
from .node_text import node_text
from .values import BuiltinRef, is_expr, is_scalar


class KernelError(Exception):
    """A diagnostic raised while parsing one statement; the parser reports it and moves on."""

    def __init__(self, code: str, message: str, node=None, related=(), span=None, fix=None):
        super().__init__(message)
        self.code, self.message, self.node, self.related, self.span = code, message, node, related, span
        self.fix = fix  # (title, replacement text for the node's span) or None


INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1


def check_value(e, node, what: str, minimum: int = 1, maximum: int = INT32_MAX):
    """Reject a constant size/extent/count that no kernel can have (invalid-value); symbolic ones pass. Sizes
    indexed in 64 bits (a global tensor's shape) pass `maximum=INT64_MAX`."""
    import math

    v = as_const(e) if is_expr(e) else e
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return e
    if isinstance(v, float) and not math.isfinite(v):
        raise KernelError("invalid-value", f"{what} is {v}; it must be a finite integer", node)
    if isinstance(v, float) and not v.is_integer():
        raise KernelError("invalid-value", f"{what} is {v}, not an integer; use `//` or T.ceildiv", node)
    if v < minimum:
        need = "positive" if minimum == 1 else f"at least {minimum}"
        raise KernelError("invalid-value", f"{what} is {int(v)}; it must be {need}", node)
    if v > maximum:
        bits = "int32 (2**31 - 1)" if maximum == INT32_MAX else "int64 (2**63 - 1)"
        raise KernelError("invalid-value", f"{what} is {_big(int(v))}, over {bits}; use a smaller value", node)
    return e


FLOAT32_MAX = 3.4028234663852886e38


def check_literal(e, node) -> None:
    """A finite float constant that float32 cannot hold (TVM refuses the literal; on the GPU it would be inf)."""
    import math

    if beyond_int64(e):
        raise KernelError("invalid-value", f"`{node_text(node)}` is an integer beyond 64 bits", node)
    if isinstance(e, N.Const) and e.dtype == "float32" and isinstance(e.value, float) and math.isfinite(e.value) \
            and abs(e.value) > FLOAT32_MAX:
        raise KernelError("invalid-value", f"`{node_text(node)}`: {e.value:g} exceeds maximum of float32 ("
                          "3.4e38); use a smaller value, or T.infinity(T.float32) for infinity", node)


def beyond_int64(e) -> bool:
    """True for an integer constant outside int64."""
    return isinstance(e, N.Const) and isinstance(e.value, int) and not -(2**63) <= e.value < 2**63


def check_shift(e: N.BinOp, node) -> None:
    """A shift by a constant amount outside [0, bits of the shifted type) (undefined on the GPU)."""
    amount, bits = as_const(e.rhs), int_bits(expr_dtype(e.lhs))
    if isinstance(amount, int) and bits and not 0 <= amount < bits:
        raise KernelError("invalid-value", f"`{node_text(node)}` shifts a {bits}-bit value by {amount}; the amount "
                          f"must be in 0..{bits - 1}", node)


ON_CHIP_MAX = 2**24  # elements: far past any register file, shared memory or local memory per block


def check_elements(what: str, shape, node, limit: int = INT32_MAX) -> None:
    """A buffer whose constant element count overflows the 32-bit indexing of the generated code (or `limit`)."""
    count = 1
    for d in shape:
        v = as_const(d)
        if not isinstance(v, int):
            return
        count *= v
    if count > limit:
        reach = {INT32_MAX: "that 32-bit indexing reaches", INT64_MAX: "that 64-bit indexing reaches"}.get(
            limit, "that any on-chip buffer can hold")
        raise KernelError("invalid-value", f"{what} has {count:,} elements, over the {limit:,} {reach}; split it "
                          "or use smaller sizes", node)


def _big(v: int) -> str:
    return f"{v:,}" if v.bit_length() <= 64 else f"about 2**{v.bit_length() - 1}"


def bind_error(exc, call: ast.Call) -> KernelError:
    """A bad-arguments KernelError from a BindError, with a rename fix for a misspelt keyword."""
    import re

    message = str(exc)
    m = re.search(r"has no parameter '(\w+)' \(did you mean '(\w+)'\?\)", message)
    kw = next((k for k in call.keywords if m and k.arg == m.group(1)), None)
    if kw is None:
        return KernelError("bad-arguments", message, call)
    span_node = ast.Name(id=kw.arg, lineno=kw.lineno, col_offset=kw.col_offset, end_lineno=kw.lineno,
                         end_col_offset=kw.col_offset + len(kw.arg))
    return KernelError("bad-arguments", message, span_node, fix=(f"Change to `{m.group(2)}`", m.group(2)))


def describe(v) -> str:
    """A value named for an error message (`buffer `A``, `a scalar`, ...)."""
    if isinstance(v, N.Buffer):
        return f"buffer `{v.name}`"
    if isinstance(v, (tuple, list)):
        return "a tuple"
    if isinstance(v, str):
        return f"string {v!r}"
    if isinstance(v, BuiltinRef):
        return f"`{v.name}`"
    if is_expr(v) or is_scalar(v):
        return "a scalar"
    return type(v).__name__
