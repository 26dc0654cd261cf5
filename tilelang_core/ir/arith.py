"""Constant folding over IR expressions: `as_int`/`as_const` give Python values when an Expr is known."""
from __future__ import annotations

import math

from .nodes import BinOp, Call, Cast, Compare, Const, Expr, UnaryOp

_BIN = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
    "//": lambda a, b: a // b,
    "%": lambda a, b: a % b,
    "**": lambda a, b: a**b,
    "<<": lambda a, b: a << b,
    ">>": lambda a, b: a >> b,
    "&": lambda a, b: a & b,
    "|": lambda a, b: a | b,
    "^": lambda a, b: a ^ b,
}


MAX_INT_BITS = 4096  # no kernel size needs more; beyond it, folding could take unbounded time and memory


def checked_op(op: str, a, b):
    """Apply a binary operator to Python constants; OverflowError instead of an integer over MAX_INT_BITS."""
    if isinstance(a, int) and isinstance(b, int) and too_big(op, a, b):
        raise OverflowError(f"`{op}` gives an integer of over {MAX_INT_BITS} bits")
    return _BIN[op](a, b)


def too_big(op: str, a: int, b: int) -> bool:
    """True when `a op b` on integers would exceed MAX_INT_BITS (decided without computing it)."""
    if op == "**":
        return b > 0 and abs(a) > 1 and (abs(a).bit_length() - 1) * b > MAX_INT_BITS
    if op == "<<":
        return b > MAX_INT_BITS or a.bit_length() + b > MAX_INT_BITS
    if op == "*":
        return a.bit_length() + b.bit_length() > MAX_INT_BITS
    return False


_CMP = {"==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a < b,
        "<=": lambda a, b: a <= b, ">": lambda a, b: a > b, ">=": lambda a, b: a >= b}
def round_float(value: float, dtype: str) -> float:
    """`value` rounded to nearest-even in float16/bfloat16 (beyond the largest finite value: ±inf, as a run-time
    cast does); other dtypes unchanged. TVM rejects a half-precision literal past the finite range instead."""
    import math
    import struct

    if dtype not in ("float16", "bfloat16") or math.isnan(value) or math.isinf(value):
        return value
    try:
        if dtype == "float16":
            return struct.unpack("<e", struct.pack("<e", value))[0]
        bits = struct.unpack("<I", struct.pack("<f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16) << 16
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _fmax(*values):
    """max that ignores NaN operands whichever side they are on (as CUDA fmaxf; Python's max is order-dependent)."""
    real = [v for v in values if v == v]
    return max(real) if real else values[0]


def _fmin(*values):
    real = [v for v in values if v == v]
    return min(real) if real else values[0]


_CALL = {"ceildiv": lambda a, b: -(-a // b), "max": _fmax, "min": _fmin}


def as_const(expr: Expr):
    """The Python value of an expression built only from constants, else None."""
    if isinstance(expr, Const):
        return expr.value
    if isinstance(expr, BinOp):
        a, b = as_const(expr.lhs), as_const(expr.rhs)
        if a is None or b is None:
            return None
        try:
            return checked_op(expr.op, a, b)
        except (ZeroDivisionError, KeyError, TypeError, OverflowError, ValueError):
            return None
    if isinstance(expr, Compare):
        a, b = as_const(expr.lhs), as_const(expr.rhs)
        return None if a is None or b is None else _CMP[expr.op](a, b)
    if isinstance(expr, UnaryOp):
        a = as_const(expr.operand)
        if a is None:
            return None
        try:
            return {"-": lambda x: -x, "not": lambda x: not x, "~": lambda x: ~x}[expr.op](a)
        except (TypeError, KeyError):  # ~ of a float
            return None
    if isinstance(expr, Call) and expr.name in _CALL:
        values = [as_const(x) for x in expr.args]  # each argument once: nested calls stay linear
        if any(v is None for v in values):
            return None
        try:
            return _CALL[expr.name](*values)
        except (ZeroDivisionError, TypeError, ValueError, OverflowError):
            return None
    if isinstance(expr, Cast):
        v = as_const(expr.value)
        if v is None:
            return None
        try:
            if expr.dtype.startswith(("int", "uint")):
                return int(v)
            return bool(v) if expr.dtype == "bool" else float(v)
        except (OverflowError, ValueError):  # inf or nan to an integer, an integer too large for a float
            return None
    return None


def as_int(expr: Expr) -> int | None:
    """The int value of an expression when it is a known integer, else None."""
    v = as_const(expr)
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, float):
        return int(v) if v.is_integer() and math.isfinite(v) else None
    return int(v)


def shape_ints(shape) -> tuple[int, ...] | None:
    """A shape as ints when every dimension is known, else None."""
    dims = [as_int(d) for d in shape]
    return None if any(d is None for d in dims) else tuple(dims)
