"""`tilelang.ir`: TileLang's helpers that stamp source spans on TVM IR nodes (TILELANG_ENABLE_IR_SPAN). tilelang_core
builds no TVM IR from the user's file: its tile IR carries a span on every node from the parse, and every
diagnostic names the user's line (CompileError's message shows it under `-->`), so these import and raise
UnsupportedFeatureError when called."""
from __future__ import annotations

from . import Unsupported

_HINT = ("tilelang_core's tile IR carries the user's span on every node and its errors print the line under `-->`; "
         "`tilelsp ir FILE` shows the IR")
_NAMES = ("get_buffer_span", "get_stmt_span", "make_span", "set_buffer_span", "set_stmt_span", "span_coverage",
          "span_to_location")

__all__ = list(_NAMES)


def __getattr__(name: str):
    if name in _NAMES:
        return Unsupported(f"tilelang.ir.{name}", _HINT)
    raise AttributeError(f"module 'tilelang.ir' has no attribute {name!r}")
