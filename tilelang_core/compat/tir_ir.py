"""`tilelang.language.tir.ir` (alias): TileLang's T.cast with rounding options and its table of rounding modes."""
from __future__ import annotations

from ..language.cast_rounding import CAST_ROUNDING_MODES, cast

_VALID_CAST_ROUNDING_MODES = CAST_ROUNDING_MODES  # TileLang's name for the table

__all__ = ["cast"]
