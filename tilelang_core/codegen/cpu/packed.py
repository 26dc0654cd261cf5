"""Packed sub-byte tensor parameters on the CPU backend (int4, uint4, float4_e2m1fn, ...; language/packing.py):
the parameter is a uint8 buffer of the packed shape; an element read takes its bits out of the byte and decodes them
(int32 for integers, float32 for fp4), an element write encodes the value (fp4: to nearest, ties to even, saturating
at ±6, NaN as +6) and rewrites its bits of the byte."""
from __future__ import annotations

from ...ir import nodes as N
from ...language.dtypes import DTYPES
from ...language.packing import E2M1_MAGNITUDES, per_byte
from ..tvm_loader import load
from .expr import LoweringError, const


class PackedParam:
    """One packed tensor parameter: its byte buffer and how many values each byte holds."""

    def __init__(self, ctx, p: N.Buffer, byte_dims: list):
        self.ctx = ctx
        self.dtype = p.dtype
        self.per_byte = per_byte(p.dtype)
        self.bits = 8 // self.per_byte
        self.bytes = ctx.tirx.decl_buffer(byte_dims, "uint8", p.name)

    def _place(self, idx: list):
        """(byte indices, bit shift as int32) of the element at logical `idx`."""
        tirx = self.ctx.tirx
        last = idx[-1]
        k = const(self.per_byte, str(last.ty))
        shift = tirx.Cast("int32", tirx.floormod(last, k)) * const(self.bits, "int32")
        return idx[:-1] + [tirx.floordiv(last, k)], shift

    def load(self, idx: list):
        """The decoded value at logical `idx` (0 where the index falls outside the tensor)."""
        tirx = self.ctx.tirx
        where, shift = self._place(idx)
        byte = tirx.Cast("int32", self.ctx.guarded_load(self.bytes, where))
        code = tirx.bitwise_and(tirx.shift_right(byte, shift), const((1 << self.bits) - 1, "int32"))
        kind = DTYPES[self.dtype].kind
        if kind == "uint":
            return code
        if kind == "int":
            sign = tirx.bitwise_and(tirx.shift_right(code, const(self.bits - 1, "int32")), const(1, "int32"))
            return code - tirx.shift_left(sign, const(self.bits, "int32"))
        return _decode_e2m1(code)

    def store(self, idx: list, value):
        """Write `value` at logical `idx`: its encoded bits replace that element's bits of the byte."""
        tirx = self.ctx.tirx
        where, shift = self._place(idx)
        mask = const((1 << self.bits) - 1, "int32")
        code = _encode_e2m1(value) if DTYPES[self.dtype].kind == "float" else \
            tirx.bitwise_and(tirx.Cast("int32", value), mask)
        # the byte's other bits, read unchecked: the store below is guarded, and this read is not the user's
        old = tirx.Cast("int32", tirx.BufferLoad(self.bytes, where))
        kept = tirx.bitwise_and(old, tirx.bitwise_not(tirx.shift_left(mask, shift)))
        new = tirx.bitwise_or(kept, tirx.shift_left(code, shift))
        return self.ctx.guarded_store(self.bytes, where, tirx.Cast("uint8", new))


def packed_dtype_supported(dtype: str) -> bool:
    """True for the packed dtypes the CPU backend reads and writes: sub-byte integers and float4_e2m1fn."""
    info = DTYPES.get(dtype)
    return per_byte(dtype) > 1 and info is not None and (info.kind in ("int", "uint") or dtype == "float4_e2m1fn")


def _decode_e2m1(code):
    """The float32 value of a float4_e2m1fn code (an int32 in 0..15)."""
    tirx = load().tirx
    mag_code = tirx.bitwise_and(code, const(7, "int32"))
    mag = const(E2M1_MAGNITUDES[-1], "float32")
    for c in range(len(E2M1_MAGNITUDES) - 2, -1, -1):
        mag = tirx.Select(mag_code == const(c, "int32"), const(E2M1_MAGNITUDES[c], "float32"), mag)
    negative = tirx.bitwise_and(code, const(8, "int32")) != const(0, "int32")
    return tirx.Select(negative, -mag, mag)


def _encode_e2m1(value):
    """The float4_e2m1fn code (int32) of a value: the nearest magnitude, ties to the even code, saturating at 6."""
    tirx = load().tirx
    x = tirx.Var("fp4_value", "float32")  # the value once, compared below against each midpoint
    mag = tirx.abs(x)
    code = const(0, "int32")
    for c in range(len(E2M1_MAGNITUDES) - 1):
        mid = const((E2M1_MAGNITUDES[c] + E2M1_MAGNITUDES[c + 1]) / 2, "float32")
        up = mag > mid if c % 2 == 0 else mag >= mid  # a tie goes to the even code
        code = code + tirx.Cast("int32", up)
    code = tirx.Select(tirx.isnan(x), const(7, "int32"), code)
    sign = tirx.Cast("int32", tirx.shift_right(tirx.reinterpret("uint32", x), tirx.const(31, "uint32")))
    return tirx.Let(x, tirx.Cast("float32", value), tirx.bitwise_or(code, tirx.shift_left(sign, const(3, "int32"))))


def refuse_bulk_use(buf: N.Buffer, span):
    """The error for a packed tensor used by a tile operation or a view (element accesses only)."""
    return LoweringError(f"'{buf.name}' holds packed {buf.dtype} values ({per_byte(buf.dtype)} a byte): the CPU "
                         "backend reads and writes them one element at a time (`A[i, j]`), not through tile "
                         "operations or views yet; copy them with a T.serial / T.Parallel loop", span or buf.span)
