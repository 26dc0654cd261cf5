"""Runtime stand-ins for `tilelang.layout` (`make_swizzled_layout`, `Layout`, `Fragment`) when a file is executed.

They only have meaning inside a kernel body, which the frontend parses rather than runs; each stub
reports itself under the module name `tilelang_core.layout` so the frontend maps it to `tilelang.layout.*`.
"""
from __future__ import annotations

from . import stub_for

_MODULE = "tilelang_core.layout"

make_swizzled_layout = stub_for("tilelang.layout.make_swizzled_layout", _MODULE)
Layout = stub_for("tilelang.layout.Layout", _MODULE)
Fragment = stub_for("tilelang.layout.Fragment", _MODULE)

__all__ = ["Fragment", "Layout", "make_swizzled_layout"]
