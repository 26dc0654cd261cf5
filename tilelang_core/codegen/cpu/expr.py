"""tirx scalar values for the CPU backend: dtype promotion, casts (fp8 built from the bits), constants and
operators.

Literal constants are weakly typed (they take the dtype of the other operand, as in TileLang); other
mismatches promote (float over int, wider over narrower; fp16 with bf16 gives fp32).
"""
from __future__ import annotations
from ...ir.arith import round_float
from ...language.dtypes import INFINITY_BITS, dtype_bits
from ..tvm_loader import load
from .wrap import wrapping


class LoweringError(Exception):
    """A construct the CPU lowering cannot translate; carries the user's span."""

    def __init__(self, message: str, span=None, code: str = "lowering-unsupported"):
        super().__init__(message)
        self.span = span
        self.code = code


def dtype_of(expr) -> str:
    """The dtype string of a tirx expression."""
    return str(expr.ty)


def is_float(dtype: str) -> bool:
    """True for float and bfloat dtypes."""
    return dtype.startswith(("float", "bfloat"))


def _bits(dtype: str) -> int:
    return dtype_bits(dtype) or 32


def int_fits(value: int, dtype: str) -> bool:
    """True when the integer `value` is in the range of the integer `dtype`."""
    bits = _bits(dtype)
    low, high = (0, 1 << bits) if dtype.startswith("uint") else (-(1 << (bits - 1)), 1 << (bits - 1))
    return low <= value < high


def promote(a: str, b: str) -> str:
    """The dtype two operands of an arithmetic op are converted to."""
    if a == b:
        return a
    if a == "bool":
        return b
    if b == "bool":
        return a
    if is_float(a) != is_float(b):
        return a if is_float(a) else b
    if is_float(a) and {a, b} == {"float16", "bfloat16"}:
        return "float32"
    return a if _bits(a) >= _bits(b) else b


def cast(expr, dtype: str):
    """`expr` converted to `dtype` (no-op when it already has it)."""
    tirx = load().tirx
    src, dtype = dtype_of(expr), "float32" if dtype == "tfloat32" else dtype  # tfloat32 is stored as float32
    if src == dtype:
        return expr
    if dtype in ("float16", "bfloat16") and isinstance(expr, (tirx.FloatImm, tirx.IntImm)) and src != "bool":
        return const(expr.value, dtype)  # folded here, rounded like the run-time cast (TVM rejects >65504)
    if dtype in FP8 and (is_float(src) or src.startswith(("int", "uint"))):  # integers through float32
        return _to_fp8(expr, dtype)
    return tirx.Cast(dtype, expr)


# (exponent bias, mantissa bits, largest finite value); TVM's own LLVM float -> fp8 conversion garbles subnormals,
# rounding, NaN, inf and out-of-range values, so that direction is built here from the bits
FP8 = {"float8_e4m3fn": (7, 3, 448.0), "float8_e4m3": (7, 3, 448.0), "float8_e5m2": (15, 2, 57344.0)}
STORED_AS = {"tfloat32": "float32", "float8_e4m3": "float8_e4m3fn"}  # the TVM (and torch) dtype of the storage


def _to_fp8(x, dtype: str):
    """float → fp8 like the GPU's `cvt.rn.satfinite`: round to nearest even, NaN stays NaN, ±inf and values past
    the largest finite one become ±max."""
    return load().tirx.reinterpret(STORED_AS.get(dtype, dtype), _fp8_code(x, dtype))


def fp8_bits(value, dtype: str):
    """The uint8 code of an fp8 `dtype` value to store as bits: a value built by `cast` is unwrapped, a wider
    value rounded like `cvt.rn.satfinite`, the result of fp8 arithmetic (computed in float) rounded keeping ±inf
    (a uint8 value is taken as the code already)."""
    src = dtype_of(value)
    if src == "uint8":
        return value
    if src in FP8 and isinstance(value, load().ir.Call) and value.op.name == "tirx.reinterpret" \
            and dtype_of(value.args[0]) == "uint8":
        return value.args[0]
    return _fp8_code(_fp8_arith_in_float(value), dtype, keep_inf=src in FP8)


def _fp8_arith_in_float(e):
    """An fp8-typed expression recomputed in float32 from its fp8 leaves' bits (TVM's fp8 -> float conversion
    garbles zero, subnormals and inf): +, -, *, /, min, max over casts, constants and other values."""
    ns = load()
    tirx = ns.tirx
    if dtype_of(e) not in FP8:
        return e if dtype_of(e) == "float32" else tirx.Cast("float32", e)
    if isinstance(e, ns.ir.Call) and e.op.name == "tirx.reinterpret" and dtype_of(e.args[0]) == "uint8":
        return from_fp8_bits(e.args[0], dtype_of(e))
    if isinstance(e, tirx.FloatImm):
        return tirx.const(e.value, "float32")
    if isinstance(e, tirx.Cast) and dtype_of(e.value) not in FP8:  # x -> fp8 -> float: the store rounds it
        return tirx.Cast("float32", e.value)
    for node in (tirx.Add, tirx.Sub, tirx.Mul, tirx.Div, tirx.Min, tirx.Max):
        if isinstance(e, node):
            return node(_fp8_arith_in_float(e.a), _fp8_arith_in_float(e.b))
    return tirx.Cast("float32", e)


def _fp8_code(x, dtype: str, keep_inf: bool = False):
    """The uint8 code of float `x` rounded to fp8 `dtype` (see `_to_fp8`); `keep_inf`: ±inf stays ±inf where the
    dtype has one (e5m2)."""
    tirx = load().tirx
    bias, mant, top = FP8[dtype]
    x = x if dtype_of(x) == "float32" else tirx.Cast("float32", x)
    u32 = lambda v: tirx.const(v, "uint32")  # noqa: E731
    mag = tirx.Min(tirx.abs(x), tirx.const(top, "float32"))
    sign = tirx.shift_right(tirx.reinterpret("uint32", x), u32(31))
    sub = tirx.Cast("uint32", tirx.nearbyint(mag * tirx.const(2.0 ** (bias + mant - 1), "float32")))
    bits, shift = tirx.reinterpret("uint32", mag), 23 - mant
    rounded = bits + u32((1 << (shift - 1)) - 1) + tirx.bitwise_and(tirx.shift_right(bits, u32(shift)), u32(1))
    normal = tirx.shift_right(rounded, u32(shift)) - u32((127 - bias) << mant)
    code = tirx.Select(mag < tirx.const(2.0 ** (1 - bias), "float32"), sub, normal)
    if keep_inf and dtype == "float8_e5m2":
        code = tirx.Select(tirx.isinf(x), u32(0x7C), code)
    code = tirx.Select(tirx.isnan(x), u32(0x7F), tirx.bitwise_or(code, tirx.shift_left(sign, u32(7))))
    return tirx.Cast("uint8", code)


def from_fp8_bits(bits, dtype: str):
    """The float32 value of fp8 `bits` (a uint8 expression), exactly: zero and subnormals included (TVM's LLVM
    fp8 -> float conversion reads them as normals), NaN for e4m3's S.1111.111, ±inf and NaN for e5m2's top exponent."""
    tirx = load().tirx
    bias, mant, _ = FP8[dtype]
    u32 = lambda v: tirx.const(v, "uint32")  # noqa: E731
    f32 = lambda v: tirx.const(v, "float32")  # noqa: E731
    b = tirx.Cast("uint32", bits)
    e = tirx.bitwise_and(tirx.shift_right(b, u32(mant)), u32((1 << (7 - mant)) - 1))
    m = tirx.bitwise_and(b, u32((1 << mant) - 1))
    normal = tirx.reinterpret("float32", tirx.bitwise_or(tirx.shift_left(e + u32(127 - bias), u32(23)),
                                                         tirx.shift_left(m, u32(23 - mant))))
    mag = tirx.Select(e == u32(0), tirx.Cast("float32", m) * f32(2.0 ** (1 - bias - mant)), normal)
    if dtype == "float8_e5m2":
        special = tirx.Select(m == u32(0), f32(float("inf")), f32(float("nan")))
        mag = tirx.Select(e == u32(31), special, mag)
    else:
        mag = tirx.Select(tirx.bitwise_and(b, u32(0x7F)) == u32(0x7F), f32(float("nan")), mag)
    return tirx.Select(tirx.shift_right(b, u32(7)) == u32(1), -mag, mag)


def infinity(dtype: str, negative: bool = False):
    """±infinity of a float dtype (e4m3 has none: its conversion of ±inf, ±448 as on the GPU's satfinite)."""
    tirx = load().tirx
    if dtype in INFINITY_BITS:
        store, pos, neg = INFINITY_BITS[dtype]
        return tirx.reinterpret(dtype, tirx.const(neg if negative else pos, store))
    if dtype in FP8:
        return _to_fp8(tirx.const(float("-inf") if negative else float("inf"), "float32"), dtype)
    inf = tirx.infinity(STORED_AS.get(dtype, dtype))
    return inf * const(-1, dtype) if negative else inf


def const(value, dtype: str):
    """A tirx constant of `dtype` (bools and ints coerced for float dtypes)."""
    tirx = load().tirx
    if is_float(dtype):
        return tirx.const(round_float(float(value), dtype), dtype)
    if dtype == "bool":
        return tirx.const(bool(value), "bool")
    return tirx.const(int(value), dtype)


def match(a, b):
    """Convert two tirx operands to their common dtype."""
    target = promote(dtype_of(a), dtype_of(b))
    return cast(a, target), cast(b, target)


def _int_div(a, b, op):
    tirx = load().tirx
    return tirx.floordiv(a, b) if op in ("/", "//") else tirx.floormod(a, b)


def binary(op: str, a, b):
    """Apply a Python binary operator to two tirx expressions (floor semantics on ints)."""
    tirx = load().tirx
    a, b = match(a, b)
    fl = is_float(dtype_of(a))
    simple = {"+": tirx.Add, "-": tirx.Sub, "*": tirx.Mul}
    if op in simple and dtype_of(a) in ("uint32", "uint64"):
        return wrapping(op, a, b, dtype_of(a))
    if op in simple:
        return simple[op](a, b)
    if op == "/":
        return tirx.Div(a, b) if fl else _int_div(a, b, op)
    if op == "//":
        return tirx.floor(tirx.Div(a, b)) if fl else _int_div(a, b, op)
    if op == "%":
        return tirx.floormod(a, b) if not fl else a - tirx.floor(tirx.Div(a, b)) * b
    if op == "**":
        return tirx.power(a, b) if fl else tirx.Cast(dtype_of(a), tirx.power(cast(a, "float64"), cast(b, "float64")))
    bit = {"<<": tirx.shift_left, ">>": tirx.shift_right, "&": tirx.bitwise_and,
           "|": tirx.bitwise_or, "^": tirx.bitwise_xor}
    if op in bit and not fl:
        return bit[op](a, b)
    raise LoweringError(f"operator {op!r} is not supported on {dtype_of(a)} values by the CPU backend")


def compare(op: str, a, b):
    """A comparison between two tirx expressions."""
    tirx = load().tirx
    a, b = _signed_view(*match(a, b))
    table = {"==": tirx.EQ, "!=": tirx.NE, "<": tirx.LT, "<=": tirx.LE, ">": tirx.GT, ">=": tirx.GE}
    return table[op](a, b)


def _signed_view(a, b):
    """Unsigned operands as int64 values that compare the same way (uint64 with the sign bit flipped).
    TVM's CompactBufferAllocation crashes ("cannot make uint from negative value") on a `T.if_then_else` whose
    condition compares a let-bound unsigned value; LLVM folds the widening back into an unsigned compare."""
    tirx = load().tirx
    t = dtype_of(a)
    if not t.startswith("uint"):
        return a, b
    if _bits(t) == 64:
        flip = tirx.const(1 << 63, "uint64")
        a, b = tirx.bitwise_xor(a, flip), tirx.bitwise_xor(b, flip)
    return tirx.Cast("int64", a), tirx.Cast("int64", b)


def as_bool(e):
    """A tirx boolean from any scalar (non-zero is true)."""
    return e if dtype_of(e) == "bool" else compare("!=", e, const(0, dtype_of(e)))


def index_expr(x):
    """An index as an integer expression (int64 kept, everything else int32)."""
    return x if dtype_of(x) in ("int32", "int64") else cast(x, "int32")
