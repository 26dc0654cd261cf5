"""Shape, dtype and size facts derived from the tile IR: element sizes, region extents, buffer bytes.

Everything here is a pure function of IR nodes; unknown (symbolic) sizes come back as None.
"""
from __future__ import annotations

import re

from ..ir import nodes as N
from ..language.dtypes import dtype_bits as _table_bits
from ..ir.arith import as_int, shape_ints
from ..ir.printer import expr_str
from .fastwalk import walk

_ALIASES = {"half": "float16", "float": "float32", "double": "float64", "bf16": "bfloat16", "fp16": "float16",
            "fp32": "float32"}

SHARED_SCOPES = ("shared", "shared.dyn")
TILE_SCOPES = ("shared", "shared.dyn", "local.fragment", "local", "local.var")


def canonical_dtype(dtype: str) -> str:
    """A dtype string in TileLang spelling ("half" -> "float16")."""
    d = str(dtype).strip()
    return _ALIASES.get(d, d)


def dtype_bits(dtype: str) -> int | None:
    """Bits per element of a dtype, or None when unknown (the dtype table's width)."""
    return _table_bits(dtype)


def is_float(dtype: str) -> bool:
    """True for floating-point dtypes (incl. bfloat16 and fp8/fp6/fp4)."""
    return canonical_dtype(dtype).startswith(("float", "bfloat", "tfloat"))


def is_int(dtype: str) -> bool:
    """True for signed/unsigned integer dtypes."""
    return canonical_dtype(dtype).startswith(("int", "uint"))


def is_low_float(dtype: str) -> bool:
    """True for the f8f6f4 family (float8_*, float6_*, float4_*)."""
    return re.match(r"float[864]_", canonical_dtype(dtype)) is not None


def elements(shape) -> int | None:
    """Number of elements of a shape, or None when a dimension is unknown."""
    dims = shape_ints(shape)
    if dims is None:
        return None
    n = 1
    for d in dims:
        n *= d
    return n


def buffer_bytes(buf: N.Buffer) -> int | None:
    """Storage bytes of a buffer (rounded up for sub-byte dtypes), or None when unknown."""
    n, bits = elements(buf.shape), dtype_bits(buf.dtype)
    if n is None or bits is None:
        return None
    return (n * bits + 7) // 8


def region_extents(region: N.Region) -> tuple:
    """Per-axis extents of a tile-op operand (the buffer's shape for a whole buffer)."""
    if region.kind == "full" or not region.axes:
        return tuple(region.buffer.shape)
    return tuple(ax.extent for ax in region.axes)


def region_starts(region: N.Region) -> tuple:
    """Per-axis start indices of an operand (zeros for a whole buffer)."""
    if region.kind == "full" or not region.axes:
        return tuple(N.Const(0) for _ in region.buffer.shape)
    return tuple(ax.start for ax in region.axes)


def non_unit(extents) -> list:
    """The extents that are not known to be 1, in order (size-1 axes do not count for matching)."""
    return [e for e in extents if as_int(e) != 1]


def same_expr(a, b) -> bool | None:
    """True/False when two extents are provably equal/different; None when it cannot be told."""
    x, y = as_int(a), as_int(b)
    if x is not None and y is not None:
        return x == y
    if expr_str(a) == expr_str(b):
        return True
    return None


def dims_str(extents) -> str:
    """Extents as '64×32' text for messages."""
    return "×".join(expr_str(e) for e in extents) if extents else "scalar"


def kib(n: int) -> str:
    """Bytes as a short KiB figure: '16 KiB', '1.5 KiB', '288.0 KiB' style."""
    v = n / 1024
    return f"{int(v)} KiB" if v.is_integer() else f"{v:.1f} KiB"


def symbolic_vars(e) -> list:
    """The Vars of kind param/symbolic/dynamic an expression depends on."""
    return [n for n in walk(e) if isinstance(n, N.Var) and n.kind in ("param", "symbolic", "dynamic")]


def runtime_kinds(func: N.PrimFunc) -> tuple[str, ...]:
    """Var kinds whose values are only known at run time in this kernel.

    "param" (scalar parameters, T.dynamic dims) counts except in eager-style kernels (the @tilelang.jit
    function is the kernel itself), where the frontend gives T.const dims the same kind although
    TileLang specialises them at compile time."""
    eager = func.factory is not None and func.factory == func.name
    return ("block", "loop", "thread", "dynamic") + (() if eager else ("param",))
