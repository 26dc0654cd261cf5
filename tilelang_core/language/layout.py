"""`tilelang.layout` when a file is executed: `Layout` and `Fragment` built on the host (`host_layout`), and
stand-ins for the swizzle helpers, which only have meaning inside a kernel body (the frontend parses it rather
than runs it). Each reports itself under the module name `tilelang_core.layout`, which the frontend maps to
`tilelang.layout.*`.
"""
from __future__ import annotations

from . import stub_for
from .host_layout import Fragment, Layout

_MODULE = "tilelang_core.layout"

_NAMES = ["make_swizzled_layout", "make_full_bank_swizzled_layout", "make_half_bank_swizzled_layout",
          "make_quarter_bank_swizzled_layout", "make_wgmma_swizzled_layout", "make_tcgen05mma_swizzled_layout",
          "make_volta_swizzled_layout", "make_linear_layout", "make_fully_replicated_layout_fragment"]
globals().update({name: stub_for(f"tilelang.layout.{name}", _MODULE) for name in _NAMES})

__all__ = sorted(_NAMES + ["Layout", "Fragment"])  # noqa: PLE0605
