"""`tilelang.tools.lower_trace`: TileLang's lowering tracer, over tilelang_core's pipeline (tilelang_core/
lower_trace.py: every `tilelang.lower` run traced stage by stage, TL_LOWER_TRACE / TL_LOWER_TRACE_DIR). TileLang's
`lower_trace(program, passes)`, which applies TVM passes one by one, and its codegen editing are TileLang internals
with no counterpart here."""
from __future__ import annotations

from . import lower_trace_core as core
from ..lower_trace import disable, enable

__all__ = ["enable", "disable", "core"]
