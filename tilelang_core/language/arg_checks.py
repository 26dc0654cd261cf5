"""Arguments TileLang rejects as soon as a builtin is called, even outside a kernel body: the runtime stubs of
`T.<name>` run these checks before saying where the builtin belongs."""
from __future__ import annotations

from .builtin import BindError, Builtin, bind
from .dtypes import dtype_lanes

ROUNDING_MODES = ("rn", "rz", "ru", "rd")
FAST_MATH = ("__exp", "__exp2", "__exp10", "__log", "__log2", "__log10", "__sin", "__cos", "__tan")
FAST_MATH_DTYPES = ("float16", "bfloat16", "float32", "float64")  # the types CUDA's fast intrinsics take


def fast_math_dtype_error(short: str, dtype) -> str | None:
    """TileLang's TypeError message for a fast-math intrinsic `T.<short>` given a `dtype` input it does not take (not
    float16/bfloat16/float32/float64), or None when it takes it (or is no fast-math intrinsic)."""
    if short not in FAST_MATH or dtype is None or str(dtype) in FAST_MATH_DTYPES:
        return None
    return f"T.{short} only supports floating-point inputs, but got {dtype}"


WARP_VOTES = ("any_sync", "all_sync", "ballot_sync", "ballot", "syncthreads_count", "syncthreads_and",
              "syncthreads_or")


def vote_predicate_error(short: str, dtype) -> str | None:
    """TileLang's TypeError message for a warp vote `T.<short>` given a predicate of `dtype` that is neither an
    integer nor a boolean, or None when it takes it (or is no warp vote, or the dtype is unknown)."""
    if short not in WARP_VOTES or dtype is None or not str(dtype).startswith(("float", "bfloat")):
        return None
    return f"T.{short} requires an integer or boolean predicate, got {dtype}"


def value_dtype(value):
    """The dtype a host value carries (a TVM expression's `.dtype`; 0.27 keeps a Var's in `.ty.dtype`), or None."""
    for holder in (value, getattr(value, "ty", None)):
        try:
            dtype = getattr(holder, "dtype", None)
        except AttributeError:  # 0.27: `.dtype` of a Var that is not a buffer handle raises
            dtype = None
        if dtype is not None:
            return dtype
    return None


def is_tvm_object(value) -> bool:
    """True for a TVM IR object (a tirx Var, a BufferLoad, a tvm Buffer), told by its type's module: tvm is not
    imported for this."""
    return (type(value).__module__ or "").split(".")[0] in ("tvm", "tvm_ffi")


def check_extract_lane_arguments(value, lane) -> None:
    """TileLang's errors for T.extract_lane arguments, read off the values without building IR: TypeError for a
    `value` that is no expression or a `lane` that is no compile-time integer (a Python int or a TVM IntImm),
    ValueError for a scalar (one-lane) expression, IndexError for a lane outside the vector."""
    if isinstance(value, (bool, int, float, complex, str)) or value is None:
        raise TypeError(f"T.extract_lane expects a PrimExpr (a vector value such as a bfloat16x2), got "
                        f"{type(value).__name__}")
    dtype = value_dtype(value)
    lanes = dtype_lanes(str(dtype)) if dtype is not None else None
    if lanes == 1:
        raise ValueError(f"T.extract_lane expects a vector expression (a dtype such as bfloat16x2), got a {dtype} "
                         "scalar")
    index = lane.value if is_tvm_object(lane) and type(lane).__name__ == "IntImm" else lane
    if isinstance(index, bool) or not isinstance(index, int):
        raise TypeError(f"T.extract_lane takes the lane as a compile-time integer, got {type(lane).__name__}")
    if index < 0 or (lanes is not None and index >= lanes):
        raise IndexError(f"T.extract_lane lane {index} is out of bounds for a vector of "
                         f"{lanes if lanes is not None else 'its'} lanes")


def check_stub_arguments(builtin: Builtin, args: tuple, kwargs: dict) -> None:
    """Raise what a Python function with the builtin's signature raises at the call: TypeError for arguments that do
    not bind (an unknown keyword such as `T.gemm(..., use_2cta=True)`, too many or missing ones), a fast-math
    intrinsic given a dtype it does not take or a warp vote a float predicate; ValueError for an IEEE rounding mode
    that is none."""
    try:
        bound = bind(builtin, list(args), kwargs)
    except BindError as err:
        raise TypeError(str(err)) from None
    mode = bound.get("rounding_mode") if builtin.name.startswith("T.ieee_") else None
    if isinstance(mode, str) and mode not in ROUNDING_MODES:
        raise ValueError(f"Invalid rounding mode {mode!r} for {builtin.name}; use one of "
                         f"{', '.join(map(repr, ROUNDING_MODES))}")
    short = builtin.name.removeprefix("T.")
    if short == "extract_lane":
        check_extract_lane_arguments(bound.get("value"), bound.get("lane"))
    first = value_dtype(args[0]) if args else None
    message = fast_math_dtype_error(short, first) or vote_predicate_error(short, first)
    if message:
        raise TypeError(message)
