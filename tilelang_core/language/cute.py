"""`tilelang.layout.cute`: CuTe's layout algebra in pure Python (integer tuples and bases in `cute_tuple`,
layouts and their algebra in `cute_layout`, recovery from TileLang layouts and swizzles in `cute_recover`)."""
from __future__ import annotations

from .cute_layout import (Layout, blocked_product, coalesce, compatible, complement, composition, congruent, cosize,
                          coshape, filter_layout, flatten_layout, flatten_to_tuple, left_inverse, logical_divide,
                          logical_product, make_column_major_layout, make_identity_layout, make_layout,
                          make_row_major_layout, rank, restrict, right_inverse, size, tiled_product)
from .cute_recover import ComposedLayout, Swizzle, affine_from_tilelang, hierarchical_from_tilelang
from .cute_tuple import E, IntTuple, ScaledBasis, from_python, product, to_python

# Recovery sits above the algebra (cute_recover imports cute_layout), so this facade gives Layout its constructors:
# the plain affine layout a TileLang `Layout` computes, and the layout onto its output coordinates (axis k on E(k)).
Layout.from_tilelang = staticmethod(affine_from_tilelang)
Layout.from_tilelang_hierarchical = staticmethod(hierarchical_from_tilelang)

flatten = flatten_layout
filter = filter_layout  # noqa: A001 -- CuTe's name

__all__ = ["ComposedLayout", "E", "IntTuple", "Layout", "ScaledBasis", "Swizzle", "coalesce", "compatible",
           "complement", "composition", "congruent", "cosize", "coshape", "filter", "flatten", "flatten_to_tuple",
           "from_python", "logical_divide", "logical_product", "make_column_major_layout", "make_identity_layout",
           "make_layout", "make_row_major_layout", "product", "rank", "restrict", "right_inverse", "size",
           "to_python", "left_inverse", "tiled_product", "blocked_product"]
