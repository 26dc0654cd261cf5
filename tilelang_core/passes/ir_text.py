"""Readable TileLang-style text of tile-IR kernels for the parsed/legalized/pipelined/layouts stages: the one
printer in `ir.printer` (kept here as the passes' entry point)."""
from __future__ import annotations

from ..ir import nodes as N
from ..ir.printer import print_func, region_str

__all__ = ["func_str", "region_str"]


def func_str(func: N.PrimFunc, notes: dict | None = None) -> str:
    """The kernel as TileLang-like text; `notes` maps id(stmt) -> a comment printed above it."""
    return print_func(func, notes)
