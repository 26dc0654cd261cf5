"""`tilelang.tileop` and `tilelang.tileop.base`: the GEMM warp-partition policy enum (T.GemmWarpPolicy)."""
from __future__ import annotations

from ..language import GemmWarpPolicy

__all__ = ["GemmWarpPolicy"]
