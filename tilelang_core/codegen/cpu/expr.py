"""Tile-IR expressions → TVM tirx expressions for the CPU backend: dtype matching, operators, intrinsics.

Literal constants are weakly typed (they take the dtype of the other operand, as in TileLang); other
mismatches promote (float over int, wider over narrower; fp16 with bf16 gives fp32).
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import round_float
from ...language.dtypes import dtype_bits
from .._tvm import load
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


def _fits(value: int, dtype: str) -> bool:
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
    if dtype in FP8 and is_float(src):
        return _to_fp8(expr, dtype)
    return tirx.Cast(dtype, expr)


# (exponent bias, mantissa bits, largest finite value); TVM's own LLVM float -> fp8 conversion garbles subnormals,
# rounding, NaN, inf and out-of-range values, so that direction is built here from the bits
FP8 = {"float8_e4m3fn": (7, 3, 448.0), "float8_e4m3": (7, 3, 448.0), "float8_e5m2": (15, 2, 57344.0)}
STORED_AS = {"tfloat32": "float32", "float8_e4m3": "float8_e4m3fn"}  # the TVM (and torch) dtype of the storage


def _to_fp8(x, dtype: str):
    """float → fp8 like the GPU's `cvt.rn.satfinite`: round to nearest even, NaN stays NaN, ±inf and values past
    the largest finite one become ±max."""
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
    code = tirx.Select(tirx.isnan(x), u32(0x7F), tirx.bitwise_or(code, tirx.shift_left(sign, u32(7))))
    return tirx.reinterpret(STORED_AS.get(dtype, dtype), tirx.Cast("uint8", code))


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


def _binary_math(fn):
    """A two-argument float function; float16/bfloat16 operands are computed in float32 and rounded back."""
    def build(args):
        a, b = match(_float_arg(args[0]), args[1])
        t = dtype_of(a)
        if t in ("float16", "bfloat16"):
            return cast(fn(cast(a, "float32"), cast(b, "float32")), t)
        return fn(a, b)
    return build


def _float_arg(x):
    return x if is_float(dtype_of(x)) else cast(x, "float32")


def _unary_math(fn):
    return lambda args: fn(_float_arg(args[0]))


def _minmax(fn):
    """max/min over the arguments; on floats NaN-quiet like CUDA's fmaxf/fminf (the other operand wins)."""
    def build(args):
        tirx = load().tirx
        out = args[0]
        for x in args[1:]:
            a, b = match(out, x)
            out = fn(a, b)
            if is_float(dtype_of(a)):
                out = tirx.Select(_isnan(a), b, tirx.Select(_isnan(b), a, out))
        return out
    return build


def _clamp(args):
    """min(max(x, lo), hi), except that a NaN x stays NaN (as torch.clamp)."""
    tirx = load().tirx
    out = _minmax(tirx.Min)([_minmax(tirx.Max)([args[0], args[1]]), args[2]])
    return tirx.Select(_isnan(args[0]), cast(args[0], dtype_of(out)), out) if is_float(dtype_of(out)) else out


def _isnan(x):
    """isnan for any float (TVM has none for bfloat16: test the float32 value)."""
    tirx = load().tirx
    return tirx.isnan(cast(x, "float32") if dtype_of(x) in ("bfloat16", "float16") else x)


def _ceildiv(args):
    """ceil(a / b) = -floor(-a / b): right for a divisor of either sign."""
    a, b = match(args[0], args[1])
    zero = const(0, dtype_of(a))
    return binary("-", zero, binary("//", binary("-", zero, a), b))


def _intrinsics() -> dict:
    tirx = load().tirx
    unary = {name: _unary_math(getattr(tirx, name)) for name in (
        "exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "tanh", "sigmoid", "floor",
        "ceil", "round", "trunc", "sin", "cos", "tan", "sinh", "cosh", "atan", "erf", "nearbyint")}
    unary["rsqrt"] = _unary_math(lambda x: const(1, dtype_of(x)) / tirx.sqrt(x))
    table = dict(unary)
    table.update({
        "abs": lambda a: tirx.abs(a[0]),
        "fabs": lambda a: tirx.abs(a[0]),
        "max": _minmax(tirx.Max), "min": _minmax(tirx.Min),
        "pow": _binary_math(tirx.power), "fmod": _binary_math(tirx.fmod), "atan2": _binary_math(tirx.atan2),
        "hypot": _binary_math(tirx.hypot), "copysign": _binary_math(tirx.copysign),
        "nextafter": _binary_math(tirx.nextafter),
        "ceildiv": _ceildiv,
        "isnan": lambda a: tirx.isnan(a[0]), "isinf": lambda a: tirx.isinf(a[0]),
        "clamp": _clamp,
        "floordiv": lambda a: binary("//", a[0], a[1]), "floormod": lambda a: binary("%", a[0], a[1]),
        "truncdiv": lambda a: tirx.truncdiv(*match(a[0], a[1])), "truncmod": lambda a: tirx.truncmod(*match(a[0], a[1])),
        "div": lambda a: binary("/", a[0], a[1]),
        "shift_left": lambda a: binary("<<", a[0], a[1]), "shift_right": lambda a: binary(">>", a[0], a[1]),
        "bitwise_and": lambda a: binary("&", a[0], a[1]), "bitwise_or": lambda a: binary("|", a[0], a[1]),
        "bitwise_xor": lambda a: binary("^", a[0], a[1]), "bitwise_not": lambda a: tirx.bitwise_not(a[0]),
        "popcount": lambda a: tirx.popcount(a[0]),
    })
    for alias, name in (("__exp", "exp"), ("__exp2", "exp2"), ("__log", "log"), ("__log2", "log2"),
                        ("fast_exp", "exp"), ("exp_approx", "exp")):
        table[alias] = table[name]
    return table


_TABLE: dict | None = None
CUDA_SOURCE_CALLS = frozenset({"import_source", "call_extern"})  # user CUDA device code (frontend/externs.py)


def intrinsic(name: str, args: list, dtype: str | None, span=None):
    """Lower a scalar intrinsic call `T.<name>(*args)`."""
    global _TABLE
    tirx = load().tirx
    if name == "likely" and len(args) == 1:  # a branch hint
        return args[0]
    if name in ("infinity", "max_value", "min_value"):
        dt = dtype or "float32"
        if name == "infinity":
            return tirx.infinity(dt) if is_float(dt) else tirx.max_value(dt)
        return getattr(tirx, name)(dt)
    if name == "reinterpret" and dtype and len(args) == 1:  # the same bits read as `dtype`
        return tirx.reinterpret(dtype, args[0])
    if _TABLE is None:
        _TABLE = _intrinsics()
    fn = _TABLE.get(name)
    if fn is None:
        raise LoweringError(f"T.{name} is not supported by the CPU backend yet", span)
    out = fn(args)
    return cast(out, dtype) if dtype else out


def index_expr(x):
    """An index as an integer expression (int64 kept, everything else int32)."""
    return x if dtype_of(x) in ("int32", "int64") else cast(x, "int32")


class Late:
    """A variable's value built when it is read (a per-thread slot indexed by the thread being lowered)."""

    def __init__(self, build):
        self.build = build


class ExprLowerer:
    """Translates tile-IR expressions with a variable map (ir Var → tirx expr or Late) and a buffer map."""

    def __init__(self, vars_: dict, buffers: dict, load_hook=None, call_hook=None):
        self.vars = vars_
        self.buffers = buffers
        self.load_hook = load_hook  # (ir Load, tirx buffer, tirx indices) -> tirx expr
        self.call_hook = call_hook  # (ir Call, tirx args) -> tirx expr, or None for the intrinsic table
        self.view_hook = None  # (ir Buffer with a base, span) -> the tirx buffer sharing the base's storage

    def __call__(self, e):
        """Lower one expression."""
        method = getattr(self, "_" + type(e).__name__, None)
        if method is None:
            raise LoweringError(f"{type(e).__name__} expressions are not supported by the CPU backend",
                                getattr(e, "span", None))
        return method(e)

    def _Const(self, e):
        return const(e.value, e.dtype)

    def _Var(self, e):
        if e not in self.vars:
            if e.kind == "thread":
                raise LoweringError(f"thread index '{e.name}' has no meaning on the CPU backend, which runs each "
                                    "block as whole-tile loops; express the work with tile ops or T.Parallel",
                                    e.span)
            if e.kind == "symbolic":
                raise LoweringError(f"'{e.name}' has no value for this kernel instance: it is neither known "
                                    "statically nor a plain dimension of a tensor parameter; give the factory's "
                                    "arguments (e.g. a `# tilelsp: factory(name=value)` comment) or call the kernel "
                                    "through the JIT", e.span)
            raise LoweringError(f"'{e.name}' has no value here (the CPU backend found no binding)", e.span)
        value = self.vars[e]
        return value.build() if isinstance(value, Late) else value

    def _weak_pair(self, lhs, rhs):
        """Lower two operands; a bare literal takes the other side's dtype when the kinds agree."""
        if isinstance(lhs, N.Const) and not isinstance(rhs, N.Const):
            b = self(rhs)
            return self._literal(lhs, dtype_of(b)), b
        a = self(lhs)
        if isinstance(rhs, N.Const) and not isinstance(lhs, N.Const):
            return a, self._literal(rhs, dtype_of(a))
        return a, self(rhs)

    def _literal(self, c: N.Const, other: str):
        if isinstance(c.value, bool) or other == "bool":
            return const(c.value, c.dtype)
        if isinstance(c.value, float) and not is_float(other):
            return const(c.value, c.dtype)
        if isinstance(c.value, int) and not is_float(other) and not _fits(c.value, other):
            return const(c.value, c.dtype)  # `T.uint64(2**34) + tx`: the literal keeps its type, tx is widened
        return const(c.value, other)

    def _BinOp(self, e):
        a, b = self._weak_pair(e.lhs, e.rhs)
        try:
            return binary(e.op, a, b)
        except LoweringError as err:
            raise LoweringError(str(err), e.span) from None

    def _Compare(self, e):
        return compare(e.op, *self._weak_pair(e.lhs, e.rhs))

    def _BoolOp(self, e):
        tirx = load().tirx
        parts = [as_bool(self(v)) for v in e.values]
        out = parts[0]
        for p in parts[1:]:
            out = tirx.And(out, p) if e.op == "and" else tirx.Or(out, p)
        return out

    def _UnaryOp(self, e):
        tirx = load().tirx
        x = self(e.operand)
        if e.op == "-":
            return binary("-", const(0, dtype_of(x)), x)
        if e.op == "not":
            return tirx.Not(as_bool(x))
        return tirx.bitwise_not(x)

    def _Call(self, e):
        if e.name in CUDA_SOURCE_CALLS:
            raise LoweringError(f"T.{e.name} runs user CUDA code, which the CPU backend cannot compile; build this "
                                "kernel for a CUDA target, or write the routine with T.* operations", e.span)
        args = [self(a) for a in e.args]
        if self.call_hook is not None:
            out = self.call_hook(e, args)
            if out is not None:
                return out
        return intrinsic(e.name, args, e.dtype, e.span)

    def _Cast(self, e):
        return cast(self(e.value), e.dtype)

    def _Select(self, e):
        tirx = load().tirx
        a, b = self._weak_pair(e.true_value, e.false_value)
        a, b = match(a, b)
        return tirx.if_then_else(as_bool(self(e.cond)), a, b)

    def _Load(self, e):
        tirx = load().tirx
        buf = self.buffers.get(e.buffer)
        if buf is None and e.buffer.base is not None and self.view_hook is not None:
            buf = self.view_hook(e.buffer, e.span)
        if buf is None:
            raise LoweringError(f"buffer '{e.buffer.name}' is used outside its allocation", e.span)
        idx = [index_expr(self(i)) for i in e.indices] or [const(0, "int32")]
        if self.load_hook is not None:
            return self.load_hook(e, buf, idx)
        return tirx.BufferLoad(buf, idx)
