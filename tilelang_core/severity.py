"""`Severity`: how bad a diagnostic is (below both the code table and the Diagnostic type, which read it)."""
from __future__ import annotations

from enum import Enum


class Severity(str, Enum):
    """How bad a diagnostic is."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
