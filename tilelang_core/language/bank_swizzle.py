"""Shared-memory bank swizzles built on the host: `make_full/half/quarter_bank_swizzled_layout(buffer)`.

A swizzle acts on 16-byte vectors of the buffer's last two dims (rows x columns): the vector column `c` of row
`i` lands at `c ^ f(i)` inside a group of 8 (full, 128-byte rows), 4 (half, 64 bytes) or 2 (quarter, 32 bytes)
vectors, so that 8 consecutive rows hit distinct banks. The layout's outputs are (column group, row group,
address within the group); leading buffer dims become leading outputs (`Layout.expand`).
"""
from __future__ import annotations

from .dtypes import dtype_bits, normalize_dtype
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

    def forward(i, j):
        row, swizzled = i % 8, (swizzled_index(i, j, cols, bits, 16 * group)[1] // vector) % group
        return [j // vector // group, i // 8, j % vector + (swizzled + row * group) * vector]

    base = Layout((rows, cols), forward)
    return base.expand(list(dims[:-2]))


def swizzled_index(row, col, row_size: int, bits: int, swizzle_bytes: int | None = None) -> tuple:
    """(row, column) where element (row, col) of a tile with rows of `row_size` elements of `bits` lands under the
    bank swizzle of `swizzle_bytes` (default: the row's bytes, at most 128): its 16-byte vector `c` moves to
    `c ^ (row % 8 // (8 // g))` within its group of g = swizzle_bytes / 16 vectors. Ints or numpy arrays."""
    row_bytes = bits * row_size // 8
    if row_bytes % 32:
        raise ValueError(f"a bank swizzle needs rows of a multiple of 32 bytes, got {row_size} x {bits}-bit elements")
    group = (min(128, row_bytes) if swizzle_bytes is None else int(swizzle_bytes)) // 16
    vector = max(128 // bits, 1)
    vec = col // vector
    swizzled = vec // group * group + (vec % group ^ row % 8 // (8 // group))
    return row, swizzled * vector + col % vector


def get_swizzle_layout(row_idx, col_idx, row_size, dtype, swizzle_bytes=None) -> tuple:
    """TileLang's `get_swizzle_layout`: the swizzled (row, column) of an element of a `dtype` tile whose rows hold
    `row_size` elements (see `swizzled_index`); a T.Layout's forward function may return it."""
    bits = dtype_bits(normalize_dtype(dtype) or str(dtype))
    if bits is None:
        raise TypeError(f"get_swizzle_layout takes a dtype such as T.float16, got {dtype!r}")
    return swizzled_index(row_idx, col_idx, int(row_size), bits, swizzle_bytes)


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
# where TileLang defines them: the frontend reads them so
make_mma_swizzle_layout.__module__ = get_swizzle_layout.__module__ = "tilelang.cuda.intrinsics"
