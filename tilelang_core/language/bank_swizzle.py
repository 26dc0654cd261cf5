"""Shared-memory bank swizzles built on the host: `make_full/half/quarter_bank_swizzled_layout(buffer)`.

A swizzle acts on 16-byte vectors of the buffer's last two dims (rows x columns): the vector column `c` of row
`i` lands at `c ^ f(i)` inside a group of 8 (full, 128-byte rows), 4 (half, 64 bytes) or 2 (quarter, 32 bytes)
vectors, so that 8 consecutive rows hit distinct banks. The layout's outputs are (column group, row group,
address within the group); leading buffer dims become leading outputs (`Layout.expand`).
"""
from __future__ import annotations

from .dtypes import dtype_bits
from .host_layout import Layout

_MODULE = "tilelang_core.layout"

# name -> vectors per swizzled row group (2 ** xor bits)
_GROUP = {"full": 8, "half": 4, "quarter": 2}


def _buffer_dims(buffer, name: str) -> tuple[tuple[int, ...], int]:
    """The buffer's concrete shape and its element width in bits."""
    shape = getattr(buffer, "shape", None)
    bits = dtype_bits(str(getattr(buffer, "dtype", "")))
    if shape is None or bits is None:
        raise TypeError(f"tilelang.layout.{name} takes a shared buffer (with a shape and a dtype), "
                        f"got {type(buffer).__name__}")
    try:
        dims = tuple(int(d) for d in shape)
    except TypeError:
        raise ValueError(f"tilelang.layout.{name} needs a buffer of constant shape, got {list(shape)}") from None
    if len(dims) < 2:
        raise ValueError(f"tilelang.layout.{name} needs a buffer of at least 2 dims, got shape {list(dims)}")
    return dims, bits


def bank_swizzled_layout(buffer, kind: str) -> Layout:
    """The `kind` ("full" / "half" / "quarter") bank swizzle of `buffer`'s last two dims."""
    name = f"make_{kind}_bank_swizzled_layout"
    dims, bits = _buffer_dims(buffer, name)
    group, vector = _GROUP[kind], max(128 // bits, 1)
    rows, cols = dims[-2:]
    if rows % 8 or cols % (vector * group):
        raise ValueError(f"tilelang.layout.{name} needs rows divisible by 8 and columns by {vector * group} "
                         f"for this dtype, got a {rows}x{cols} tile")
    spread = 8 // group  # rows sharing one xor pattern

    def forward(i, j):
        row, vec_col = i % 8, (j // vector) % group
        swizzled = vec_col ^ ((row // spread) % group)
        return [j // vector // group, i // 8, j % vector + (swizzled + row * group) * vector]

    base = Layout((rows, cols), forward)
    return base.expand(list(dims[:-2]))


def make_full_bank_swizzled_layout(buffer) -> Layout:
    """128-byte (3-bit) bank swizzle of a shared buffer's last two dims."""
    return bank_swizzled_layout(buffer, "full")


def make_half_bank_swizzled_layout(buffer) -> Layout:
    """64-byte (2-bit) bank swizzle of a shared buffer's last two dims."""
    return bank_swizzled_layout(buffer, "half")


def make_quarter_bank_swizzled_layout(buffer) -> Layout:
    """32-byte (1-bit) bank swizzle of a shared buffer's last two dims."""
    return bank_swizzled_layout(buffer, "quarter")


def make_mma_swizzle_layout(buffer, is_smooth: bool = False) -> Layout:
    """The bank swizzle an ldmatrix/mma operand tile gets: full for rows of a multiple of 128 bytes, half for 64,
    quarter for 32; rows of other widths (and `is_smooth=True`) keep the identity layout."""
    dims, bits = _buffer_dims(buffer, "make_mma_swizzle_layout")
    row_bytes = dims[-1] * bits // 8
    kind = "full" if row_bytes % 128 == 0 else {64: "half", 32: "quarter"}.get(row_bytes)
    if is_smooth or kind is None or dims[-2] % 8:
        return Layout(dims, lambda *idx: list(idx))
    return bank_swizzled_layout(buffer, kind)


for _fn in (make_full_bank_swizzled_layout, make_half_bank_swizzled_layout, make_quarter_bank_swizzled_layout):
    _fn.__module__ = _MODULE
make_mma_swizzle_layout.__module__ = "tilelang.cuda.intrinsics"  # where TileLang defines it: the frontend reads it so
