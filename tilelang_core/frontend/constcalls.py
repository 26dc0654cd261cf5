"""Compile-time values of calls and attributes outside kernel bodies: pure Python builtins on known
arguments, TileLang builtins that yield sizes, dtypes and tensor types, and argparse namespaces.
"""
from __future__ import annotations

from ..ir import nodes as N
from ..language.types import DType
from .kernel_errors import KernelError
from .node_text import node_text
from .values import (BuiltinRef, ConstDims, LiveNamespace, ModuleRef, TensorSpec, Unknown, from_live, is_concrete,
                     is_scalar, normalize_dtype, to_expr)

# the Python builtins a compile-time value may call (their names resolve to them in consteval.Env)
SAFE_BUILTINS = {"min": min, "max": max, "int": int, "float": float, "bool": bool, "abs": abs, "len": len,
                 "round": round, "pow": pow, "tuple": tuple, "list": list, "str": str, "sum": sum, "divmod": divmod,
                 "range": range, "True": True, "False": False, "None": None, "any": any, "all": all}


class ArgsNamespace:
    """The result of `parser.parse_args()`: the argparse defaults seen so far."""

    def __init__(self, values: dict):
        self.values = values


def get_attr(base, attr: str, node=None):
    """`base.attr` over frontend values."""
    if isinstance(base, LiveNamespace) and not hasattr(base.live, attr):
        raise KernelError("unsupported-syntax", f"`{type(base.live).__name__}` has no `{attr}` in tilelang_core "
                          f"(it provides {', '.join(n for n in vars(base.live) if not n.startswith('_'))})", node)
    if isinstance(base, (ModuleRef, BuiltinRef, LiveNamespace)):
        return base.attr(attr)
    if isinstance(base, ArgsNamespace):
        return base.values.get(attr, Unknown(f"args.{attr}"))
    if isinstance(base, str) and attr in ("upper", "lower", "split", "strip", "replace", "startswith", "endswith",
                                          "format", "join"):
        return getattr(base, attr)
    if isinstance(base, N.Buffer):
        if attr == "shape":
            return tuple(base.shape)
        if attr == "data":  # only ever passed on: T.Tensor(shape, dtype, A.data) views A
            return base
        if attr == "dtype":
            return DType(base.dtype)
    if isinstance(base, TensorSpec) and attr in ("shape", "dtype"):
        return getattr(base, attr)
    if isinstance(base, DType) and attr == "bits":
        return _dtype_bits(str(base))
    return Unknown(f"{node_text(node.value) if node is not None else '?'}.{attr}")


def call_value(func, args, kwargs, text: str = "?"):
    """Call a function value when it is pure and its arguments are known; otherwise Unknown."""
    if isinstance(func, BuiltinRef):
        return call_builtin_const(func, args, kwargs, text)
    if isinstance(func, DType):
        return args[0] if args else Unknown(text)
    if _is_tvm_datatype(func) and len(args) == 1 and not kwargs and isinstance(args[0], str):
        return DType(normalize_dtype(args[0]) or args[0])  # `DataType(dtype).bits`
    if func is len and len(args) == 1 and not kwargs and isinstance(args[0], (tuple, list)):
        return len(args[0])  # `len(buf.shape)`: the rank is known even where the extents are not
    known = all(is_concrete(a) for a in args) and all(is_concrete(v) for v in kwargs.values())
    if known and isinstance(func, type) and getattr(func, "__tilelang_namespace__", False):
        return _construct(func, args, kwargs, text)
    if func in (min, max) and args and not known and not kwargs:
        exprs = [to_expr(a) for a in args]
        if all(e is not None for e in exprs):
            out = exprs[0]
            for e in exprs[1:]:
                out = N.Call(func.__name__, (out, e))
            return out
    if known and (func in SAFE_BUILTINS.values() or getattr(func, "__module__", None) == "math"
                  or (callable(func) and getattr(func, "__self__", None).__class__ is str)
                  or getattr(func, "__tilelang_core_pure__", False)):  # e.g. carver's driver.get_num_sms()
        costly = _costly(func, args, kwargs)
        if costly:
            return Unknown(text, costly)
        return call_or(lambda: func(*args, **kwargs), Unknown(text))
    return Unknown(text)


MAX_ITEMS = 100_000  # compile-time sequences longer than this are left unknown (bounded work per check)


def _costly(func, args, kwargs) -> str | None:
    """Why calling a pure function on these arguments could take unbounded time or memory (else None)."""
    from ..ir.arith import MAX_INT_BITS, too_big

    values = list(args) + list(kwargs.values())
    if func is pow and len(args) == 2 and all(isinstance(a, int) for a in args) and too_big("**", *args):
        return f"`pow` gives an integer of over {MAX_INT_BITS} bits"
    if any(isinstance(v, int) and v.bit_length() > MAX_INT_BITS for v in values):
        return f"an integer argument has over {MAX_INT_BITS} bits"
    if any(isinstance(v, range) and call_or(lambda v=v: len(v), MAX_ITEMS + 1) > MAX_ITEMS for v in values):
        return f"a range of over {MAX_ITEMS:,} items"
    if getattr(func, "__module__", None) == "math" and any(isinstance(v, int) and abs(v) > 10_000 for v in values) \
            and getattr(func, "__name__", "") in ("factorial", "comb", "perm", "prod"):
        return f"`math.{func.__name__}` of an argument over 10,000"
    if getattr(func, "__name__", "") in ("format", "ljust", "rjust", "center", "zfill") or \
            any(isinstance(v, str) and len(v) > MAX_ITEMS for v in values):
        import re

        owner = getattr(func, "__self__", "")
        if any(isinstance(v, int) and v > MAX_ITEMS for v in values) or re.search(r"\d{6,}", str(owner)):
            return "a string of over 100,000 characters"
    return None


def call_builtin_const(ref: BuiltinRef, args, kwargs, text: str):
    """The compile-time value of a TileLang builtin call outside kernel bodies (sizes, dtypes, tensor types)."""
    short = ref.short
    if short == "ceildiv" and len(args) == 2:
        a, b = args
        if isinstance(a, int) and isinstance(b, int) and b != 0:
            return -(-a // b)
        ea, eb = to_expr(a), to_expr(b)
        return N.Call("ceildiv", (ea, eb)) if ea is not None and eb is not None else Unknown(text)
    if short in ("max", "min") and len(args) == 2 and all(is_scalar(a) for a in args):
        return (max if short == "max" else min)(*args)
    if short in ("cdiv", "next_power_of_2") and ref.name.startswith("tilelang.") and args and all(
            isinstance(a, int) and not isinstance(a, bool) for a in args):  # tilelang(.math).cdiv / next_power_of_2
        if short == "cdiv":
            return call_or(lambda: -(-args[0] // args[1]), Unknown(text))
        return 1 if args[0] <= 1 else 1 << (args[0] - 1).bit_length()
    if short in ("dynamic", "symbolic") and args and isinstance(args[0], str):
        dtype = normalize_dtype(args[1] if len(args) > 1 else kwargs.get("dtype", "int32")) or "int32"
        dims = tuple(N.Var(n, dtype, "param") for n in args[0].replace(",", " ").split() if n)  # "S, B" -> 2
        return dims[0] if len(dims) == 1 else dims
    if short in ("Tensor", "Buffer", "StridedTensor", "FragmentBuffer", "SharedBuffer", "LocalBuffer"):
        shape = args[0] if args else kwargs.get("shape", ())
        at = 2 if short == "StridedTensor" else 1  # T.StridedTensor(shape, strides, dtype)
        dtype = args[at] if len(args) > at else kwargs.get("dtype", "float32")
        return make_tensor_spec(shape, dtype)
    if short == "const" and args and isinstance(args[0], str):
        return ConstDims(tuple(n for n in args[0].replace(",", " ").split() if n))
    if short == "dtype" and args:
        dt = normalize_dtype(args[0])
        return DType(dt) if dt else Unknown(text)
    if short in ("jit", "prim_func", "macro", "autotune", "compile", "lazy_jit"):
        return Unknown(text)
    dt = normalize_dtype(short)
    if dt is not None and ref.name.startswith("T."):  # T.float32(0.5): the value itself
        return args[0] if args else Unknown(text)
    return Unknown(text)


def make_tensor_spec(shape, dtype) -> TensorSpec:
    """A TensorSpec from a shape value (tuple, list or single extent) and a dtype value."""
    if not isinstance(shape, (tuple, list)):
        shape = (shape,)
    dt = normalize_dtype(dtype) if isinstance(dtype, str) else None
    if dt is None and isinstance(dtype, BuiltinRef):
        return TensorSpec(tuple(shape), dtype)  # a misspelt T.<dtype>: the kernel parser reports it
    return TensorSpec(tuple(shape), dt or (dtype if isinstance(dtype, str) else "unknown"))


def _construct(cls, args, kwargs, text: str):
    """A namespace object built while parsing (e.g. the tensor-core emitter); what it raises is an error at the
    statement that builds it (its macros would otherwise vanish from the kernel)."""
    try:
        return from_live(cls(*args, **kwargs))
    except Exception as exc:  # noqa: BLE001 - its own argument checks
        raise KernelError("unsupported-syntax", f"`{text}` failed: {exc}") from None


def call_or(fn, default):
    """`fn()`, or `default` when it raises (user arithmetic may fail; the value is then unknown)."""
    try:
        return fn()
    except Exception:  # noqa: BLE001 - user arithmetic may fail; then the value is unknown
        return default


def _is_tvm_datatype(func) -> bool:
    """True for tvm's DataType class (`from tvm import DataType`; tvm_ffi's `dtype` in apache-tvm 0.27)."""
    module = (getattr(func, "__module__", None) or "").split(".")[0]
    return isinstance(func, type) and func.__name__ in ("DataType", "dtype") and module in ("tvm", "tvm_ffi")


def _dtype_bits(name: str) -> int | Unknown:
    digits = "".join(ch for ch in name.split("_")[0] if ch.isdigit())
    return int(digits) if digits else Unknown(name)
