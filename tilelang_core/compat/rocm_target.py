"""`tilelang.rocm.target` (alias): the HIP availability query, which answers False on tilelang_core."""
from __future__ import annotations

__all__ = ["check_hip_availability"]


def check_hip_availability() -> bool:
    """False: tilelang_core has no AMD/HIP target, so HIP is never available to it (TileLang asks rocminfo)."""
    return False
