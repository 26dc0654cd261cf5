"""What the CUDA backend refuses of packed sub-byte tensors (language/packing.py): a write of one element (TVM's
CUDA code would store a whole byte over its neighbour; two threads would race on the byte's other bits) and
sub-byte integer tensors (indexed as 32-bit words). Element reads of fp4 tensors work; the CPU backend does all."""
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
        if isinstance(node, N.Store):
            raise LoweringError(f"a write of one {buf.dtype} element of '{buf.name}' (two a byte) is not supported "
                                "by the CUDA backend yet: it would overwrite the other value of the byte; the CPU "
                                "backend runs it", node.span or buf.span, "lowering-unsupported")
