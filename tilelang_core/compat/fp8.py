"""`tilelang.language.fp8`: the fp8 dtype names for the device (CUDA's OCP e4m3/e5m2; tilelang_core has no
AMD fnuz types)."""
from __future__ import annotations

__all__ = ["determine_fp8_type", "determine_torch_fp8_type"]


def determine_fp8_type(fp8_format: str = "e4m3"):
    """T.float8_e4m3fn (or T.float8_e5m2 for fp8_format="e5m2")."""
    from .. import language as T

    if fp8_format not in ("e4m3", "e5m2"):
        raise ValueError(f"unknown fp8 format {fp8_format!r}: use 'e4m3' or 'e5m2'")
    return T.float8_e4m3fn if fp8_format == "e4m3" else T.float8_e5m2


def determine_torch_fp8_type(fp8_format: str = "e4m3"):
    """torch.float8_e4m3fn (or torch.float8_e5m2)."""
    import torch

    return getattr(torch, str(determine_fp8_type(fp8_format)))
