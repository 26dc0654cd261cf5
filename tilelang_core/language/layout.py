"""`tilelang.layout` (and `tilelang.layout.swizzle`) when a file is executed: `Layout` and `Fragment` built on the
host (`host_layout`), the bank swizzles built from a buffer (`bank_swizzle`), CuTe's layout algebra (`cute`), the
mma 8x8 fragments and `SwizzleMode`, and stand-ins for the other swizzle helpers, which only have meaning inside a
kernel body (the frontend parses it rather than runs it). Each reports itself under the module name
`tilelang_core.layout`, which the frontend maps to `tilelang.layout.*`.
"""
from __future__ import annotations

import enum

from . import cute, stub_for
from .bank_swizzle import (make_full_bank_swizzled_layout, make_half_bank_swizzled_layout,
                           make_quarter_bank_swizzled_layout)
from .host_layout import Fragment, Layout

_MODULE = "tilelang_core.layout"

_NAMES = ["make_swizzled_layout", "make_wgmma_swizzled_layout", "make_tcgen05mma_swizzled_layout",
          "make_volta_swizzled_layout", "make_linear_layout", "make_fully_replicated_layout_fragment"]
globals().update({name: stub_for(f"tilelang.layout.{name}", _MODULE) for name in _NAMES})

__all__ = sorted(_NAMES + ["make_full_bank_swizzled_layout", "make_half_bank_swizzled_layout",  # noqa: PLE0605
                           "make_quarter_bank_swizzled_layout", "Layout", "Fragment", "SwizzleMode", "cute",
                           "make_gemm_fragment_8x8", "make_gemm_fragment_8x8_transposed"])


class SwizzleMode(enum.IntEnum):
    """The shared-memory swizzle of a TMA / wgmma descriptor (TileLang's `tilelang.layout.SwizzleMode`)."""

    NONE = 0
    SWIZZLE_32B = 1
    SWIZZLE_64B = 2
    SWIZZLE_128B = 3

    def wgmma_layout_type(self) -> int:
        """The layout-type field of a wgmma shared-memory descriptor (0 none, 1 128B, 2 64B, 3 32B)."""
        return {0: 0, 1: 3, 2: 2, 3: 1}[int(self)]


def make_gemm_fragment_8x8() -> Fragment:
    """The 8x8 accumulator tile of one mma.sync warp: thread 4*i + j//2 holds row i, columns j and j+1."""
    return Fragment((8, 8), forward_fn=lambda i, j: (i * 4 + j // 2, j % 2))


def make_gemm_fragment_8x8_transposed() -> Fragment:
    """`make_gemm_fragment_8x8` with rows and columns swapped: thread 4*j + i//2 holds column j, rows i and i+1."""
    return Fragment((8, 8), forward_fn=lambda i, j: (j * 4 + i // 2, i % 2))


for _fn in (SwizzleMode, make_gemm_fragment_8x8, make_gemm_fragment_8x8_transposed):
    _fn.__module__ = _MODULE
