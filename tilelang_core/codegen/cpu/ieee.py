"""`T.ieee_add/sub/mul/fmaf/frcp/fsqrt/frsqrt/fdiv` with a rounding mode on the CPU backend, IEEE-exact like
CUDA's `__fadd_rz` family.

Round to nearest is the operation itself (float16 / bfloat16 computed in float32 and rounded back). A directed mode
("rz", "ru", "rd") rounds the nearest result one step toward the mode when the exact result lies on the other side
of it; that side is the sign of the operation's exact error: computed in float64 for float32 operands, and by an
FMA (`llvm.fma`; for ieee_fmaf the sum of its three exact error terms) or TwoSum for float64 ones, fenced with
`llvm.arithmetic.fence` against the build's fast-math.
"""
from __future__ import annotations

from ..tvm_loader import load
from .expr import LoweringError, cast, const, dtype_of

DTYPES = ("float16", "bfloat16", "float32", "float64")  # the float dtypes IEEE calls compute in
ARITY = {"ieee_add": 2, "ieee_sub": 2, "ieee_mul": 2, "ieee_fmaf": 3, "ieee_frcp": 1, "ieee_fsqrt": 1,
         "ieee_frsqrt": 1, "ieee_fdiv": 2}


def is_ieee(name: str) -> bool:
    """True for `ieee_<op>` and `ieee_<op>_<mode>` call names."""
    return _split(name)[0] in ARITY


def _split(name: str) -> tuple[str, str]:
    base, _, mode = name.rpartition("_")
    return (base, mode) if mode in ("rz", "ru", "rd") else (name, "rn")


def ieee(name: str, args: list, span=None):
    """The tirx value of an IEEE call on `args` (all of the first argument's float dtype)."""
    tirx = load().tirx
    op, mode = _split(name)
    dtype = dtype_of(args[0])
    if dtype not in DTYPES:
        raise LoweringError(f"T.{op} works on float values, not {dtype}", span)
    args = [cast(a, dtype) for a in args]
    if dtype in ("float16", "bfloat16"):
        return cast(_nearest(tirx, op, [cast(a, "float32") for a in args]), dtype)
    if mode == "rn":
        return _nearest(tirx, op, args)
    if dtype == "float32":
        wide = _exact64(tirx, op, [cast(a, "float64") for a in args])
        near = cast(wide[0], "float32")
        return _directed(tirx, near, tirx.Sub(wide[0], cast(near, "float64")) + wide[1], mode)
    near, err = _error64(tirx, op, args, span)
    return _directed(tirx, near, err, mode)


def _nearest(tirx, op: str, a: list):
    """The operation rounded to nearest; `+`, `-`, `*` with fenced operands, which TVM cannot fold (x * 0 -> 0,
    x - x -> 0 and x + 0 -> x are wrong for inf, NaN and -0.0)."""
    one = const(1, dtype_of(a[0]))
    fence = lambda x: _fence(tirx, x)  # noqa: E731
    return {"ieee_add": lambda: fence(a[0]) + fence(a[1]), "ieee_sub": lambda: a[0] - fence(a[1]),
            "ieee_mul": lambda: fence(a[0]) * fence(a[1]),
            "ieee_fdiv": lambda: a[0] / a[1], "ieee_frcp": lambda: one / a[0], "ieee_fsqrt": lambda: tirx.sqrt(a[0]),
            "ieee_frsqrt": lambda: cast(const(1, "float64") / tirx.sqrt(cast(a[0], "float64")), dtype_of(a[0]))
            if dtype_of(a[0]) == "float32" else one / tirx.sqrt(a[0]),
            "ieee_fmaf": lambda: _fma(tirx, *a)}[op]()


def _fma(tirx, a, b, c):
    dtype = dtype_of(a)
    return tirx.call_llvm_pure_intrin(dtype, f"llvm.fma.f{dtype[5:]}", a, b, c)


def _two_sum_error(tirx, a, b, s):
    """The exact error of s = a + b (TwoSum; the sum is fenced so that fast-math cannot cancel the terms)."""
    s = _fence(tirx, s)
    bb = _fence(tirx, s - a)
    return (a - (s - bb)) + (b - bb)


def _fence(tirx, x):
    """`x` as LLVM must compute it: no fast-math reassociation or contraction across the fence."""
    return tirx.call_llvm_pure_intrin(dtype_of(x), "llvm.arithmetic.fence", x)


def _exact64(tirx, op: str, a: list):
    """(float64 result, float64 error) of a float32 operation computed in float64: result + error is exact, or its
    sign relative to any float32 value is (division and square roots are never a float32 tie)."""
    zero = const(0, "float64")
    if op in ("ieee_add", "ieee_sub"):
        b = a[1] if op == "ieee_add" else -a[1]
        s = a[0] + b
        return s, _two_sum_error(tirx, a[0], b, s)
    if op == "ieee_fmaf":
        p = a[0] * a[1]  # exact: 24 + 24 bits
        s = p + a[2]
        return s, _two_sum_error(tirx, p, a[2], s)
    return _nearest(tirx, op, a), zero


def _error64(tirx, op: str, a: list, span):
    """(nearest float64 result, a float64 whose sign is the sign of exact - nearest)."""
    r = _nearest(tirx, op, a)
    if op in ("ieee_add", "ieee_sub"):
        b = a[1] if op == "ieee_add" else -a[1]
        return r, _two_sum_error(tirx, a[0], b, r)
    if op == "ieee_mul":
        return r, _fma(tirx, a[0], a[1], -r)
    if op == "ieee_fdiv":  # a / b - r has the sign of (a - r * b) / b
        return r, _fma(tirx, -r, a[1], a[0]) * a[1]
    if op == "ieee_frcp":
        return r, _fma(tirx, -r, a[0], const(1, "float64")) * a[0]
    if op == "ieee_fsqrt":
        return r, _fma(tirx, -r, r, a[0])
    if op == "ieee_fmaf":  # a * b = p + ep exactly, p + c = s + es exactly: exact - r = (s - r) + es + ep
        p = _fence(tirx, a[0] * a[1])  # fenced: fast-math would contract p + c into the fma itself
        ep = _fma(tirx, a[0], a[1], -p)
        s = _fence(tirx, p + a[2])
        return r, _fence(tirx, s - r) + (_two_sum_error(tirx, p, a[2], s) + ep)
    raise LoweringError(f"T.{op} with a directed rounding mode on float64 is not supported by the CPU backend; use "
                        "rounding_mode=\"rn\" or float32 values", span)


def _directed(tirx, near, err, mode: str):
    """`near` moved one step toward the rounding mode when the exact result (sign of `err`) lies beyond it."""
    zero = const(0, dtype_of(err))
    inf = tirx.infinity(dtype_of(near))
    up, down = tirx.nextafter(near, inf), tirx.nextafter(near, -inf)
    if mode == "ru":
        return tirx.Select(tirx.GT(err, zero), up, near)
    if mode == "rd":
        return tirx.Select(tirx.LT(err, zero), down, near)
    toward_zero = tirx.Select(tirx.GT(near, const(0, dtype_of(near))), down, up)
    away = tirx.Or(tirx.And(tirx.GT(near, const(0, dtype_of(near))), tirx.LT(err, zero)),
                   tirx.And(tirx.LT(near, const(0, dtype_of(near))), tirx.GT(err, zero)))
    return tirx.Select(away, toward_zero, near)
