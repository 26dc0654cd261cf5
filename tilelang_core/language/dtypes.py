"""The dtype table: every TileLang dtype name with its width, kind, torch name and accepted aliases.

`normalize_dtype` turns whatever a user wrote (`T.float16`, `"float16"`, `"half"`, `T.half`, `torch.float16`)
into the canonical name; the frontend and the analysis use it. Nothing here imports torch.
"""
from __future__ import annotations

import functools
import sys
from dataclasses import dataclass

from .types import DType


@dataclass(frozen=True)
class DTypeInfo:
    """One dtype: canonical name, storage bits, kind (int|uint|float|bool), torch attribute name."""

    name: str
    bits: int
    kind: str
    torch: str | None = None
    aliases: tuple[str, ...] = ()  # other strings TileLang accepts for it ("half", "float")
    attr_aliases: tuple[str, ...] = ()  # other `T.<name>` attributes bound to it (T.half)

    @property
    def bytes(self) -> float:
        """Bytes per element (0.5 for 4-bit types)."""
        return self.bits / 8

    @property
    def is_float(self) -> bool:
        """True for floating-point kinds (fp8/fp6/fp4 included)."""
        return self.kind == "float"


_ROWS = [
    DTypeInfo("bool", 8, "bool", "bool"),
    DTypeInfo("int1", 1, "int", None),
    DTypeInfo("int4", 4, "int", None),
    DTypeInfo("int8", 8, "int", "int8"),
    DTypeInfo("int16", 16, "int", "int16", ("short",), ("short",)),
    DTypeInfo("int32", 32, "int", "int32", ("int",), ("int",)),
    DTypeInfo("int64", 64, "int", "int64", ("long",), ("long",)),
    DTypeInfo("uint1", 1, "uint", None),
    DTypeInfo("uint4", 4, "uint", None),
    DTypeInfo("uint8", 8, "uint", "uint8"),
    DTypeInfo("uint16", 16, "uint", "uint16"),
    DTypeInfo("uint32", 32, "uint", "uint32", ("uint",), ("uint",)),
    DTypeInfo("uint64", 64, "uint", "uint64", ("ulong",)),
    DTypeInfo("float16", 16, "float", "float16", ("half", "fp16"), ("half",)),
    DTypeInfo("bfloat16", 16, "float", "bfloat16", ("bf16",)),
    DTypeInfo("float32", 32, "float", "float32", ("float", "fp32"), ("float",)),
    DTypeInfo("float64", 64, "float", "float64", ("double", "fp64"), ("double",)),
    DTypeInfo("tfloat32", 32, "float", "float32"),  # stored as float32; torch passes float32 tensors
    DTypeInfo("float8_e4m3fn", 8, "float", "float8_e4m3fn"),
    DTypeInfo("float8_e4m3", 8, "float", "float8_e4m3fn", ("e4m3_float8",)),
    DTypeInfo("float8_e4m3fnuz", 8, "float", "float8_e4m3fnuz"),
    DTypeInfo("float8_e5m2", 8, "float", "float8_e5m2", ("e5m2_float8",)),
    DTypeInfo("float8_e5m2fnuz", 8, "float", "float8_e5m2fnuz"),
    DTypeInfo("float8_e8m0fnu", 8, "float", "float8_e8m0fnu"),
    DTypeInfo("float8_e3m4", 8, "float", None),
    DTypeInfo("float8_e4m3b11fnuz", 8, "float", None),
    DTypeInfo("float6_e2m3fn", 6, "float", None),
    DTypeInfo("float6_e3m2fn", 6, "float", None),
    DTypeInfo("float4_e2m1fn", 4, "float", None),
    DTypeInfo("float4_e2m1_unpacked", 8, "float", None,  # one fp4 value per byte (shared memory / TMA only)
              ("custom[float4_e2m1_unpacked]8",)),  # TVM's name of it
    DTypeInfo("handle", 64, "handle", None, ("ptr",), ("ptr",)),  # T.ptr: a pointer-valued element
]

DTYPES: dict[str, DTypeInfo] = {row.name: row for row in _ROWS}
_all_dtypes = frozenset(DTYPES)  # TileLang's name for the set of dtype names (`T.<name>` for each)
_ALIASES: dict[str, str] = {a: row.name for row in _ROWS for a in row.aliases}
_PY_TYPES = {"bool": "bool", "int": "int32", "float": "float32"}
_NO_VECTOR = ("float4_e2m1_unpacked", "handle")  # dtypes without a vector form (no T.float4_e2m1_unpackedx2)
FLOAT4 = ("float4_e2m1fn", "float4_e2m1_unpacked")  # the 4-bit floats: packed two per byte, or one per byte


def _from_object(x) -> str | None:
    """The dtype name carried by a non-string object (torch/numpy dtype, Python type, DType-like)."""
    if isinstance(x, type):
        if (x.__module__ or "").startswith("numpy"):  # np.float16 -> "float16", np.bool_ -> "bool"
            return x.__name__.rstrip("_")
        return _PY_TYPES.get(x.__name__)
    mod = type(x).__module__ or ""
    if mod.startswith("torch"):  # torch.float16 -> "torch.float16"
        return str(x).split(".", 1)[-1]
    if mod.startswith("numpy"):
        return str(x)
    return None


def normalize_dtype(x) -> str | None:
    """Canonical dtype name for `x` ("float16" for T.float16, "half", torch.float16), or None if unknown."""
    if x is None:
        return None
    name = x if isinstance(x, str) else _from_object(x)
    if name is None:
        return None
    name = name.strip()
    for prefix in ("T.", "tl.", "torch.", "tilelang.language."):
        name = name.removeprefix(prefix)
    if name in DTYPES:
        return name
    if name in _ALIASES:
        return _ALIASES[name]
    base, sep, lanes = name.rpartition("x")  # vector types: float16x2
    if sep and lanes.isdigit() and base in DTYPES and base not in _NO_VECTOR:
        return name
    return None


def _base(x) -> str | None:
    """The scalar dtype name of `x` (the lane type of a vector dtype), or None if unknown."""
    name = normalize_dtype(x)
    if name is None or name in DTYPES:
        return name
    return name.rpartition("x")[0]


def dtype_lanes(x) -> int:
    """Vector lanes of a dtype (`float16x2` -> 2); 1 for scalar and unknown dtypes."""
    name = normalize_dtype(x)
    return 1 if name is None or name in DTYPES else int(name.rpartition("x")[2])


def is_float4(x) -> bool:
    """True for the 4-bit float dtypes, packed (`float4_e2m1fn`, its vectors) or unpacked."""
    return _base(x) in FLOAT4


def is_float4_e2m1fn(x) -> bool:
    """True for the packed fp4 dtype `float4_e2m1fn` (two values per byte) and its vectors."""
    return _base(x) == "float4_e2m1fn"


def is_float4_e2m1_unpacked(x) -> bool:
    """True for `float4_e2m1_unpacked` (one fp4 value in the low bits of each byte)."""
    return _base(x) == "float4_e2m1_unpacked"


def dtype_info(x) -> DTypeInfo | None:
    """The table row for a dtype written any accepted way (None if unknown)."""
    name = normalize_dtype(x)
    if name is None or name in DTYPES:
        return DTYPES.get(name) if name else None
    base, _, lanes = name.rpartition("x")  # a vector type: lanes x the base width
    row = DTYPES[base]
    return DTypeInfo(name, row.bits * int(lanes), row.kind, None)


# (storage dtype, bits of +inf, bits of -inf) of the floats TVM has no infinity for; e4m3 has none at all (its
# largest finite value, 448, is what a saturating conversion makes of inf)
INFINITY_BITS = {"bfloat16": ("uint16", 0x7F80, 0xFF80), "float8_e5m2": ("uint8", 0x7C, 0xFC)}
E4M3_MAX = 448.0


def dtype_bits(x) -> int | None:
    """Storage bits per element of a dtype (None if unknown)."""
    info = dtype_info(x)
    return info.bits if info else None


def is_dtype_name(name: str) -> bool:
    """True when `name` (as in `T.<name>`) is a dtype attribute of the T namespace."""
    return name in DTYPES or any(name in row.attr_aliases for row in _ROWS)


def closest_dtype(name: str) -> str | None:
    """The known dtype name closest to a misspelled one, for `invalid-dtype` suggestions."""
    import difflib

    pool = list(DTYPES) + list(_ALIASES)
    match = difflib.get_close_matches(str(name), pool, n=1, cutoff=0.6)
    return normalize_dtype(match[0]) if match else None


class DTypeValue(DType):
    """A runtime dtype value (`T.float16`, `T.dtype(...)`): a string with TileLang's `bits`, `lanes` and
    `as_torch()`. Made by `dtype_value`, which gives tvm's own DataType (a subclass, _tvm_dtype_class) once
    tvm is loaded."""

    @property
    def bits(self) -> int:
        """Bits of one lane, as tvm's DataType counts them (`T.float16x2.bits == 16`)."""
        info = dtype_info(_base(self))
        return info.bits if info else 0

    @property
    def lanes(self) -> int:
        """Vector lanes (1 for scalar types)."""
        return dtype_lanes(self)

    def as_torch(self):
        """The matching torch dtype (imports torch); packed fp4 is stored as torch.float4_e2m1fn_x2 (two values
        per element), so `T.float4_e2m1fn` and `T.float4_e2m1fnx2` both give it where torch has it."""
        import torch

        info = DTYPES.get(str(self))
        if is_float4_e2m1fn(self) and self.lanes <= 2 and hasattr(torch, "float4_e2m1fn_x2"):
            return torch.float4_e2m1fn_x2
        if info is None or info.torch is None:
            raise TypeError(f"{self!s} has no torch dtype")
        return getattr(torch, info.torch)

    def is_float4(self) -> bool:
        """True for a 4-bit float dtype (packed or unpacked)."""
        return is_float4(self)

    def is_float4_e2m1fn(self) -> bool:
        """True for packed fp4 (and its vectors)."""
        return is_float4_e2m1fn(self)

    def is_float4_e2m1_unpacked(self) -> bool:
        """True for unpacked fp4 (one value per byte)."""
        return is_float4_e2m1_unpacked(self)


# TileLang's custom dtypes: name -> DLPack type code (tvm's custom codes start at 129)
CUSTOM_CODES = {"float4_e2m1_unpacked": 131}
_STORED_AS = {"tfloat32": "float32"}  # dtypes tvm has no name for, spelled for tvm as the type that stores them
_VALUES: dict[tuple[str, bool], DTypeValue] = {}


def dtype_value(name: str) -> DTypeValue:
    """The runtime dtype object for a dtype name. TileLang's are tvm DataType instances; ours are too once tvm-ffi is
    loaded (a program that can ask `isinstance(x, tvm.DataType)` has loaded it), and light strings before, so that
    `import tilelang`, `T.float16` and the checker import neither tvm nor torch. Both compare equal to the name."""
    key = (name, "tvm_ffi" in sys.modules)
    if key not in _VALUES:
        _VALUES[key] = _tvm_dtype(name) if key[1] else DTypeValue(name)
    return _VALUES[key]


def tvm_spelling(name: str) -> str:
    """How tvm writes a canonical dtype name ("custom[float4_e2m1_unpacked]8", "float32" for tfloat32)."""
    if name in CUSTOM_CODES:
        return f"custom[{name}]8"
    return _STORED_AS.get(name, name)


def register_custom_dtypes() -> None:
    """Teach tvm-ffi TileLang's custom dtype names (`tvm.DataType("custom[float4_e2m1_unpacked]8")`), as TileLang's
    library does when it loads; imports tvm-ffi; idempotent."""
    import tvm_ffi

    if tvm_ffi.get_global_func("dtype.get_custom_type_code", allow_missing=True) is not None:
        return
    names = {code: name for name, code in CUSTOM_CODES.items()}
    tvm_ffi.register_global_func("dtype.get_custom_type_code", lambda name: CUSTOM_CODES[name])
    tvm_ffi.register_global_func("dtype.get_custom_type_name", lambda code: names[code])


def _tvm_dtype(name: str) -> DTypeValue:
    """`name` as tvm's DataType (a light DTypeValue for a name tvm cannot parse)."""
    try:
        return _tvm_dtype_class()(name)
    except ValueError:
        return DTypeValue(name)


@functools.cache
def _tvm_dtype_class() -> type:
    """The class of dtype values that are tvm's DataType too, made on first use (it imports tvm-ffi)."""
    import tvm_ffi

    register_custom_dtypes()

    class TvmDType(tvm_ffi.dtype, DTypeValue):
        """A dtype that is tvm's DataType (its `bits`, `lanes`, `type_code`, `itemsize`) and TileLang's (a cast when
        called, `as_torch()`, the float4 predicates). Its text is TileLang's: the name, or tvm's for a custom dtype."""

        __slots__ = ()

        def __new__(cls, name: str):
            canonical = normalize_dtype(name) or name
            spelled = tvm_spelling(canonical)
            value = str.__new__(cls, spelled if canonical in CUSTOM_CODES else canonical)
            value._tvm_ffi_dtype = tvm_ffi.dtype(spelled)._tvm_ffi_dtype  # the base's slot, for our spelling
            return value

        def __reduce__(self):
            return (dtype_value, (normalize_dtype(self) or str(self),))

    return TvmDType


def resolve_torch_storage_dtype(x):
    """The dtype whose torch tensors store `x`: itself when torch has it, int8/uint8 for 4-bit ints, the packed
    float4_e2m1fnx2 (torch.float4_e2m1fn_x2, else int8) for fp4."""
    info = dtype_info(x)
    if info is None:
        raise TypeError(f"unknown dtype {x!r}")
    if info.torch is not None:
        return dtype_value(info.name)
    if info.name == "float4_e2m1fn":
        import torch

        return dtype_value("float4_e2m1fnx2" if hasattr(torch, "float4_e2m1fn_x2") else "int8")
    if info.kind in ("int", "uint") and info.bits < 8:
        return dtype_value("uint8" if info.kind == "uint" else "int8")
    raise TypeError(f"{info.name} has no torch storage dtype")


def __getattr__(name: str):
    """TileLang's `dtypes._TORCH_DTYPE_TO_STR` (torch dtype -> name) and `dtypes.dtype(name)`, built on first
    use so that importing this module never imports torch."""
    if name == "_TORCH_DTYPE_TO_STR":
        import torch

        table = {getattr(torch, row.torch): row.name for row in reversed(_ROWS)
                 if row.torch and hasattr(torch, row.torch)}
        globals()[name] = table
        return table
    if name == "dtype":
        def dtype(value) -> DTypeValue:
            """The TileLang dtype for a name, T.<dtype> or torch dtype."""
            return dtype_value(normalize_dtype(value) or str(value))

        globals()[name] = dtype
        return dtype
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
