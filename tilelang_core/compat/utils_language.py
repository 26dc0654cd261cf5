"""`tilelang.utils.language`: TileLang's helpers that turn buffers and regions into TVM IR (`to_buffer_region`, ...).
tilelang_core builds no TVM IR from the user's program, so they import and raise UnsupportedFeatureError when
called."""
from __future__ import annotations

from . import Unsupported

_HINT = "it builds TVM IR (a BufferRegion), which tilelang_core does not build from the user's program"


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return Unsupported(f"tilelang.utils.language.{name}", _HINT)
