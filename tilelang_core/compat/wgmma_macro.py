"""`tilelang.cuda.intrinsics.macro.wgmma_macro_generator` (alias): `compute_gmma_descriptor` (from
`language.gmma_descriptor`); its wgmma emitters import and raise `UnsupportedFeatureError` when called."""
from __future__ import annotations

from tilelang_core.language.gmma_descriptor import GmmaDescriptorParams, compute_gmma_descriptor

from . import Unsupported

__all__ = ["GmmaDescriptorParams", "compute_gmma_descriptor"]

_HINT = ("TileLang's CUDA intrinsic emitters generate TVM TIR for its own backend; write the kernel with "
         "T.gemm / T.wgmma_gemm instead")


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return Unsupported(f"tilelang.cuda.intrinsics.macro.wgmma_macro_generator.{name}", _HINT)
