"""The scalar intrinsics of the CPU backend (`T.exp`, `T.max`, `T.clamp`, ...) as tirx expressions."""
from __future__ import annotations

from ..tvm_loader import load
from .expr import LoweringError, binary, cast, const, dtype_of, infinity, is_float, match
from .ieee import ieee, is_ieee


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


def _isfinite(args):
    """isfinite: neither inf nor NaN (any float, 16-bit ones through float32; an integer always is)."""
    tirx, x = load().tirx, args[0]
    if not is_float(dtype_of(x)):
        return tirx.const(True, "bool")
    x = cast(x, "float32") if dtype_of(x) in ("bfloat16", "float16") else x
    return tirx.And(tirx.Not(tirx.isinf(x)), tirx.Not(tirx.isnan(x)))


def _isnan(x):
    """isnan for any float (TVM has none for bfloat16: test the float32 value)."""
    tirx = load().tirx
    return tirx.isnan(cast(x, "float32") if dtype_of(x) in ("bfloat16", "float16") else x)


def _ceildiv(args):
    """ceil(a / b) = -floor(-a / b): right for a divisor of either sign."""
    a, b = match(args[0], args[1])
    zero = const(0, dtype_of(a))
    return binary("-", zero, binary("//", binary("-", zero, a), b))


def _libm(name: str):
    """A two-argument libm function called by name (`fmodf` for float32, `fmod` for float64): LLVM has no
    intrinsic for it."""
    def call(a, b):
        dtype = dtype_of(a)
        return load().tirx.call_pure_extern(dtype, name + ("f" if dtype == "float32" else ""), a, b)
    return call


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
        "pow": _binary_math(tirx.power), "fmod": _binary_math(_libm("fmod")), "atan2": _binary_math(tirx.atan2),
        "hypot": _binary_math(tirx.hypot), "copysign": _binary_math(tirx.copysign),
        "nextafter": _binary_math(tirx.nextafter),
        "ceildiv": _ceildiv,
        "isnan": lambda a: tirx.isnan(a[0]), "isinf": lambda a: tirx.isinf(a[0]), "isfinite": _isfinite,
        "clamp": _clamp,
        "floordiv": lambda a: binary("//", a[0], a[1]), "floormod": lambda a: binary("%", a[0], a[1]),
        "truncdiv": lambda a: tirx.truncdiv(*match(a[0], a[1])), "truncmod": lambda a: tirx.truncmod(*match(a[0], a[1])),
        "div": lambda a: binary("/", a[0], a[1]),
        "shift_left": lambda a: binary("<<", a[0], a[1]), "shift_right": lambda a: binary(">>", a[0], a[1]),
        "bitwise_and": lambda a: binary("&", a[0], a[1]), "bitwise_or": lambda a: binary("|", a[0], a[1]),
        "bitwise_xor": lambda a: binary("^", a[0], a[1]), "bitwise_not": lambda a: tirx.bitwise_not(a[0]),
        "popcount": lambda a: tirx.popcount(a[0]),
        "__ldg": lambda a: a[0],  # a read-only-cache hint: the load itself
    })
    for alias, name in (("__exp", "exp"), ("__exp2", "exp2"), ("__exp10", "exp10"), ("__log", "log"),
                        ("__log2", "log2"), ("__log10", "log10"), ("__tan", "tan"), ("__cos", "cos"),
                        ("__sin", "sin"), ("fast_exp", "exp"), ("exp_approx", "exp")):
        table[alias] = table[name]
    return table


_TABLE: dict | None = None


def intrinsic(name: str, args: list, dtype: str | None, span=None):
    """Lower a scalar intrinsic call `T.<name>(*args)`."""
    global _TABLE
    tirx = load().tirx
    if name == "likely" and len(args) == 1:  # a branch hint
        return args[0]
    if name in ("infinity", "max_value", "min_value"):
        dt = dtype or "float32"
        if name == "infinity":
            return infinity(dt) if is_float(dt) else tirx.max_value(dt)
        return getattr(tirx, name)(dt)
    if name == "reinterpret" and dtype and len(args) == 1:  # the same bits read as `dtype`
        return tirx.reinterpret(dtype, args[0])
    if is_ieee(name):
        return ieee(name, args, span)
    if _TABLE is None:
        _TABLE = _intrinsics()
    fn = _TABLE.get(name)
    if fn is None:
        raise LoweringError(f"T.{name} is not supported by the CPU backend yet", span)
    out = fn(args)
    return cast(out, dtype) if dtype else out
