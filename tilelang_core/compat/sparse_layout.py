"""`tilelang.cuda.intrinsics.sparse_layout`: the 2:4 structured-sparsity metadata contract of `T.gemm_sp`
(which elements one metadata word indexes), the part of `tilelang.cuda` that is plain arithmetic."""
from __future__ import annotations

from ..language.dtypes import dtype

__all__ = ["GROUP_CONFIG", "get_e_factor", "get_e_replicate_factor"]

# dtype -> (kept elements, group size): 1 of 2 for float32, 2 of 4 for 16- and 8-bit types
GROUP_CONFIG = {dtype(name): group for name, group in (
    ("float32", (1, 2)), ("float16", (2, 4)), ("bfloat16", (2, 4)), ("int8", (2, 4)), ("uint8", (2, 4)),
    ("float8_e4m3", (2, 4)), ("float8_e5m2", (2, 4)))}

_INDEX_BITS_PER_GROUP = 4  # each group's kept positions take 4 metadata bits


def get_e_factor(a_dtype, meta_dtype) -> int:
    """How many `a_dtype` elements one `meta_dtype` metadata element describes."""
    _, group = GROUP_CONFIG[dtype(a_dtype)]
    return dtype(meta_dtype).bits // _INDEX_BITS_PER_GROUP * group


def get_e_replicate_factor(a_dtype) -> int:
    """How many consecutive threads share one metadata value (1 for 8-bit inputs, else 2)."""
    return 1 if dtype(a_dtype).bits <= 8 else 2
