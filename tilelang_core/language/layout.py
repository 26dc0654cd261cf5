"""Runtime stand-ins for `tilelang.layout` (`make_swizzled_layout`, `Layout`, `Fragment`) when a file is executed.

They only have meaning inside a kernel body, which the frontend parses rather than runs; each stub
reports itself under the module name `tilelang_core.layout` so the frontend maps it to `tilelang.layout.*`.
"""
from __future__ import annotations

from . import stub_for

_MODULE = "tilelang_core.layout"

_NAMES = ["make_swizzled_layout", "make_full_bank_swizzled_layout", "make_half_bank_swizzled_layout",
          "make_quarter_bank_swizzled_layout", "make_wgmma_swizzled_layout", "make_tcgen05mma_swizzled_layout",
          "make_volta_swizzled_layout", "make_linear_layout", "make_fully_replicated_layout_fragment",
          "Layout", "Fragment"]
globals().update({name: stub_for(f"tilelang.layout.{name}", _MODULE) for name in _NAMES})

__all__ = sorted(_NAMES)  # noqa: PLE0605
