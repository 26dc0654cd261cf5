"""What the CUDA backend refuses of packed sub-byte tensors (language/packing.py): sub-byte integer tensors (indexed
as 32-bit words). Element reads of fp4 tensors work, and element writes (lower.py: tl::store_fp4 keeps the byte's
other element); the CPU backend does all."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.visitor import walk
from ...language.dtypes import DTYPES
from ...language.packing import per_byte
from .common import LoweringError


def check_packed_accesses(func: N.PrimFunc) -> None:
    """LoweringError at the first access to a packed tensor parameter that the CUDA backend cannot lower."""
    packed = {p for p in func.params if isinstance(p, N.Buffer) and per_byte(p.dtype) > 1}
    if not packed:
        return
    for node in walk(func.body):
        buf = getattr(node, "buffer", None)
        if buf not in packed:
            continue
        if DTYPES[buf.dtype].kind in ("int", "uint"):
            raise LoweringError(f"'{buf.name}' holds packed {buf.dtype} values: the CUDA backend does not read or "
                                "write sub-byte integer tensors yet (the CPU backend does); pass int8 values",
                                node.span or buf.span, "lowering-unsupported")
