"""`tilelang.tools.lower_trace.core`: the tracer's session and switches under TileLang's names
(tilelang_core/lower_trace.py does the work)."""
from __future__ import annotations

from ..lower_trace import StageRecord, TraceSession, disable, enable, last_session, mode_from_env

__all__ = ["enable", "disable", "get_last_session", "TraceSession", "StageRecord"]

_get_mode = mode_from_env  # TileLang's name of the TL_LOWER_TRACE parser
get_last_session = last_session
