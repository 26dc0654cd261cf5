"""Catalog entries of the thread-level intrinsics and epoch builtins beyond the tile program: the reducer epoch,
warp votes and reductions, predicated loads and stores, launch-ordering hints (hover text in
`catalog_docs_intrinsics.py`)."""
from __future__ import annotations

from .catalog_build import entry as _b

INTRINSICS = [
    _b("T.reducer_init", "tile-op", ("reducer", "buffer"), ("value", "expr", None)),
    _b("T.reducer_update", "tile-op", ("dst", "expr"), ("value", "expr")),
    _b("T.atomic_or", "tile-op", ("dst", "region"), ("value", "any"), ("memory_order", "str", None),
       ("return_prev", "bool", False)),
    *[_b(f"T.cluster_{n}", "kernel") for n in ("arrive", "wait", "sync")],
    *[_b(f"T.tma_store_{n}", "kernel") for n in ("arrive", "wait")],
    *[_b(f"T.pdl_{n}", "kernel") for n in ("trigger", "sync")],
    _b("T.shfl_sync", "math", ("value", "expr"), ("src_lane", "expr"), ("width", "int", 32),
       ("mask", "expr", 0xFFFFFFFF)),
    _b("T.__ldg", "memory", ("x", "expr")),
    *[_b(f"T.{n}", "math", ("predicate", "expr"), ("mask", "expr", 0xFFFFFFFF), returns="int32")
      for n in ("any_sync", "all_sync")],
    _b("T.ballot_sync", "math", ("predicate", "expr"), ("mask", "expr", 0xFFFFFFFF), returns="uint64"),
    _b("T.ballot", "math", ("predicate", "expr"), returns="uint64"),
    *[_b(f"T.syncthreads_{n}", "kernel", ("predicate", "expr"), returns="int32") for n in ("count", "and", "or")],
    _b("T.align_up", "math", ("lhs", "expr"), ("rhs", "expr")),
    _b("T.all_of", "math", ("buffer", "region"), returns="bool"),
    _b("T.any_of", "math", ("buffer", "region"), returns="bool"),
]
