"""Handlers of the scalar builtins: math intrinsics, casts, selects, typed constants and compile-time values
(T.const, T.dynamic).
"""
from __future__ import annotations

from ..ir import nodes as N
from ..ir.arith import as_const, as_int
from ..language.arg_checks import fast_math_dtype_error
from ..language.dtypes import dtype_lanes
from .expr_info import expr_dtype
from .handler_args import arg, src_text
from .kernel_errors import KernelError
from .values import BuiltinRef, Unknown, normalize_dtype

MATH_INTRINSICS = {"exp", "exp2", "exp10", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "abs", "floor", "ceil",
                   "round", "trunc", "tanh", "sigmoid", "sin", "cos", "tan", "erf", "pow", "max", "min", "fmod",
                   "clamp", "ceildiv", "floordiv", "floormod", "truncdiv", "truncmod", "shift_left", "shift_right",
                   "bitwise_and", "bitwise_or", "bitwise_xor", "isnan", "isinf", "isfinite", "popcount", "nearbyint",
                   "atan", "atan2", "asin", "acos", "sinh", "cosh", "exp2f", "fast_exp", "__exp", "__exp10", "__log",
                   "__log2", "__log10", "__tan", "__cos", "__sin", "ieee_add", "ieee_sub", "ieee_mul", "ieee_fmaf",
                   "ieee_frcp", "ieee_fsqrt", "ieee_frsqrt", "ieee_fdiv", "hypot", "copysign", "nextafter", "ldexp",
                   "reinterpret", "likely"}


def h_math(p, b, node, short):
    """T.exp/T.max/... : a scalar intrinsic Call (a dtype argument, as in T.reinterpret, sets the result type)."""
    args, dtype = [], None
    for a in _value_nodes(short, node):
        v = p.ev.eval(a)
        if isinstance(v, str):  # a dtype (T.reinterpret) sets the result type; other strings are modes
            dtype = normalize_dtype(v) or dtype
            continue
        args.append(p.ev.scalar_value(v, a))
    _check_arity(short, len(args), node)
    message = fast_math_dtype_error(short, expr_dtype(args[0])) if args else None
    if message:
        raise KernelError("fast-math-dtype", f"{message}; cast it with T.cast(x, T.float32)", node)
    if short in _DIVISIONS and len(args) == 2 and as_const(args[1]) == 0:
        raise KernelError("invalid-value", f"`{src_text(node)}` divides by zero", node)
    if short == "ceildiv" and len(args) == 2:
        a, c = as_int(args[0]), as_int(args[1])
        if a is not None and c:
            return -(-a // c)
    dtype = dtype or (expr_dtype(args[0]) if args else None)
    return N.Call(short, tuple(args), dtype, p.span(node))


def _value_nodes(short: str, node) -> list:
    """The call's argument nodes in parameter order: keywords (`T.clamp(x, min_val=0, max_val=1)`) go to the
    places the catalog gives their names."""
    if not node.keywords:
        return list(node.args)
    from .signatures import registry_entry

    names = [q.name for q in getattr(registry_entry(f"T.{short}"), "params", ())]
    slots = list(node.args) + [None] * max(0, len(names) - len(node.args))
    for k in node.keywords:
        at = names.index(k.arg) if k.arg in names else -1
        if at < 0 or at < len(node.args):
            why = "has no parameter" if at < 0 else "got a second value for"
            raise KernelError("bad-arguments", f"`T.{short}` {why} `{k.arg}`; its parameters are "
                              f"({', '.join(names)})", k.value)
        slots[at] = k.value
    while slots and slots[-1] is None:
        slots.pop()
    if None in slots:
        missing = names[slots.index(None)]
        raise KernelError("bad-arguments", f"`T.{short}` is missing its argument `{missing}`", node)
    return slots


def h_align_up(p, b, node, short):
    """T.align_up(lhs, rhs): lhs rounded up to a multiple of rhs, written as `T.ceildiv(lhs, rhs) * rhs`."""
    up = h_math(p, b, node, "ceildiv")
    rhs = p.ev.scalar(b["rhs"])
    if isinstance(up, int) and as_int(rhs) is not None:
        return up * as_int(rhs)
    return N.BinOp("*", up if not isinstance(up, int) else N.Const(up), rhs, p.span(node))


_DIVISIONS = ("ceildiv", "floordiv", "floormod", "truncdiv", "truncmod", "fmod")


def _check_arity(short: str, given: int, node) -> None:
    """A scalar intrinsic called with fewer or more value arguments than its catalog entry takes."""
    from .signatures import registry_entry

    entry = registry_entry(f"T.{short}")
    params = [q for q in getattr(entry, "params", ()) if q.kind == "expr"]
    if entry is None or not params or any(q.variadic for q in params):
        return
    required = sum(1 for q in params if q.required)
    if required <= given <= len(params):
        return
    names = ", ".join(q.name for q in params)
    raise KernelError("bad-arguments", f"`T.{short}` takes {len(params)} value argument"
                      f"{'s' if len(params) != 1 else ''} ({names}) but this call passes {given}", node)


def h_Cast(p, b, node, short):  # noqa: N802 - TIR spelling T.Cast(dtype, value)
    """T.Cast(dtype, value): the TIR-style cast."""
    if len(node.args) < 2:
        raise KernelError("bad-arguments", "T.Cast takes (dtype, value)", node)
    return p.cast_to(p.dtype_arg(node.args[0], p.ev.eval(node.args[0])), node, node.args[1])


def h_if_then_else(p, b, node, short):
    """T.if_then_else(cond, a, b) and T.Select(condition, true_value, false_value)."""
    cond = p.ev.scalar(b["cond"] if "cond" in b else b["condition"])
    return N.Select(cond, p.ev.scalar(b["true_value"]), p.ev.scalar(b["false_value"]), p.span(node))


def h_cast(p, b, node, short):
    """T.cast(value, dtype, round="", sat=True, rbits=None): the dtype's default conversion. The options are checked
    as TileLang checks them; a rounding other than the default (round-to-nearest-even between floats) is refused."""
    from ..language.cast_rounding import cast_option_error

    dtype = p.dtype_arg(b.get("dtype"), arg(p, b, "dtype"))
    round_mode = arg(p, b, "round") if "round" in b else ""
    sat = arg(p, b, "sat") if "sat" in b else True
    rbits = arg(p, b, "rbits") if "rbits" in b else None
    problem = cast_option_error("" if round_mode is None else round_mode, sat, rbits is not None)
    if problem is not None:
        raise KernelError("bad-arguments", problem, node)
    if round_mode not in ("", None) and not (round_mode == "rn" and dtype.startswith(("float", "bfloat"))):
        raise KernelError("lowering-unsupported", f"T.cast(..., round={round_mode!r}) to {dtype} is not supported by "
                          "tilelang_core yet: its backends convert with the dtype's default rounding (to nearest "
                          "even between floats, truncation to integers); leave `round` out", node)
    return p.cast_to(dtype, node, b["value"])


def h_typed_const(p, b, node, short):
    """T.infinity/max_value/min_value(dtype)."""
    dtype = p.dtype_arg(b.get("dtype"), arg(p, b, "dtype"))
    return N.Call(short, (), dtype, p.span(node))


def h_const_value(p, b, node, short):
    """T.const("M, N") (eager dims) and T.dynamic/T.symbolic("m"): their compile-time values."""
    from .constcalls import call_builtin_const

    args, kwargs = p.ev.call_args(node)
    return call_builtin_const(BuiltinRef("T." + short), args, kwargs, f"T.{short}")


def h_extract_lane(p, b, node, short):
    """T.extract_lane(value, lane): a lane of a vector value. Kernels have no vector-typed values, so a scalar
    `value` is TileLang's ValueError and any other is refused (a value of a dtype the checker cannot work out is
    left unknown)."""
    value = p.ev.scalar(b["value"])
    lane = as_int(p.ev.scalar(b["lane"]))
    dtype = normalize_dtype(expr_dtype(value))
    if dtype is None:  # the checker could not work it out: it says nothing (the compile knows the dtype)
        return Unknown(f"T.{short}")
    if dtype_lanes(dtype) == 1:
        raise KernelError("invalid-value", f"`{src_text(node)}`: T.extract_lane expects a vector expression (a dtype "
                          f"such as bfloat16x2), and `{src_text(b['value'])}` is a {dtype} scalar: use it directly",
                          node)
    if lane is None or lane < 0:
        raise KernelError("bad-arguments", f"`{src_text(node)}`: T.extract_lane takes the lane as a compile-time "
                          "integer from 0", node)
    raise KernelError("lowering-unsupported", f"`{src_text(node)}` reads a lane of a vector value, and kernels have "
                      "no vector-typed values yet; keep the lanes in a T.alloc_local buffer and index it", node)


def h_let(p, b, node, short):
    """T.let(v, value): binds `v` (declared with `v = T.int32()`) to `value` for the rest of the block."""
    given = dict(zip(("v", "value", "body"), node.args))
    given.update({k.arg: k.value for k in node.keywords})
    if "body" in given:
        raise KernelError("unsupported-syntax", f"`{src_text(node)}`: T.let with a body is not supported in a kernel; "
                          "write `T.let(v, value)` as a statement, or `v = value`", node)
    if "v" not in given or "value" not in given:
        raise KernelError("bad-arguments", "T.let needs a variable and its value: `v = T.int32()` then "
                          "`T.let(v, value)`", node)
    var = p.ev.eval(given["v"])
    if not isinstance(var, N.Var) or var.kind != "let":
        raise KernelError("bad-arguments", f"`{src_text(given['v'])}` is not a variable declared in the kernel; "
                          "declare it with `v = T.int32()` (or another dtype) first", given["v"])
    value = p.ev.scalar(given["value"])
    p.emit(N.LetStmt(var, value if expr_dtype(value) == var.dtype else N.Cast(var.dtype, value, value.span),
                     p.span(node)))

