"""`tilelang.cuda.intrinsics` and `.intrinsics.layout.mma_layout` (alias): `make_mma_swizzle_layout` and
`get_swizzle_layout` (host-built, `language.bank_swizzle`); every other
name of TileLang's CUDA intrinsic helpers imports and raises `UnsupportedFeatureError` when called."""
from __future__ import annotations

from tilelang_core.language.bank_swizzle import get_swizzle_layout, make_mma_swizzle_layout

from . import Unsupported

__path__: list = []  # a package: its submodules (sparse_layout, macro...) have their own aliases
__all__ = ["get_swizzle_layout", "make_mma_swizzle_layout"]

_HINT = ("TileLang's CUDA intrinsic emitters generate TVM TIR for its own backend; write the kernel with "
         "T.gemm / T.copy instead")


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return Unsupported(f"tilelang.cuda.intrinsics.{name}", _HINT)
