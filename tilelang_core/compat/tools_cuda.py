"""`tilelang.tools.cuda`: TileLang's CUDA tools; `iket` (in-kernel event tracing, compat/iket.py)."""
from __future__ import annotations

from . import iket

__all__ = ["iket"]
