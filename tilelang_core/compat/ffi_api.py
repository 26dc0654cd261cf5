"""`tilelang._ffi_api` (alias): the layout entry points TileLang's tests call through its FFI table."""
from __future__ import annotations


def Layout_repeat(layout, dim: int, factor: int):  # noqa: N802 -- TileLang's FFI name
    """`layout.repeat(dim, factor)` (ValueError on a bad dim or factor, as TileLang's FFI raises)."""
    return layout.repeat(dim, factor)
