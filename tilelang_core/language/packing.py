"""Sub-byte dtypes (int4, uint4, float4_e2m1fn, ...) stored packed: several values a byte, the first in the low
bits, as torch stores `float4_e2m1fn_x2`. A tensor of logical shape (..., n) is passed as bytes of shape
(..., n / per_byte); the other dimensions and every stride but the last's scale by per_byte."""
from __future__ import annotations

from .dtypes import DTYPES

E2M1_MAGNITUDES = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)  # float4_e2m1fn by code 0..7; bit 3 is the sign


def per_byte(dtype: str) -> int:
    """Values of `dtype` per byte of storage: 2 for 4-bit dtypes, 8 for 1-bit ones, 1 for byte-sized and wider."""
    info = DTYPES.get(str(dtype))
    if info is None or info.bits >= 8 or info.kind == "handle" or 8 % info.bits:
        return 1
    return 8 // info.bits


def storage_torch_names(dtype: str) -> tuple[str, ...]:
    """The torch dtypes a packed tensor of `dtype` may be passed as (bytes; torch's own fp4 pair type for fp4)."""
    return ("uint8", "int8") + (("float4_e2m1fn_x2",) if dtype == "float4_e2m1fn" else ())


def output_torch_name(dtype: str) -> str:
    """The torch dtype a packed output of `dtype` is allocated with."""
    return "float4_e2m1fn_x2" if dtype == "float4_e2m1fn" else "int8" if dtype.startswith("int") else "uint8"


def logical_shape(storage_shape: tuple, dtype: str) -> tuple:
    """The logical shape of a packed tensor passed with `storage_shape` (its bytes)."""
    k = per_byte(dtype)
    if k == 1 or not storage_shape:
        return tuple(storage_shape)
    return (*storage_shape[:-1], storage_shape[-1] * k)


def storage_shape(shape: tuple, dtype: str) -> tuple:
    """The byte shape holding a packed tensor of logical `shape` (ValueError when the last dim does not fill whole
    bytes)."""
    k = per_byte(dtype)
    if k == 1 or not shape:
        return tuple(shape)
    if shape[-1] % k:
        raise ValueError(f"the last dimension of a {dtype} tensor must be a multiple of {k} (values per byte), "
                         f"got {shape[-1]}")
    return (*shape[:-1], shape[-1] // k)
