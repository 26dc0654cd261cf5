"""What every CUDA lowering module shares: the lowering error, small text helpers, the buffers a statement uses."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.visitor import op_regions, walk
from ...language.dtypes import dtype_bits


class LoweringError(Exception):
    """A construct the CUDA lowering does not support (code lowering-unsupported) at `span`."""

    def __init__(self, message: str, span=None, code: str = "lowering-unsupported"):
        super().__init__(message)
        self.span = span
        self.code = code


def all_of(conds: list[str]) -> str:
    """The conjunction of TVMScript conditions, as nested T.And."""
    text = conds[0]
    for c in conds[1:]:
        text = f"T.And({text}, {c})"
    return text


def local_ints(em, base: str, count: int) -> list[str]:
    """Texts of `count` int32 slots of the emitter's local array named after `base` (allocated on first use): values
    computed once and read in later loops (a let would be inlined into every use)."""
    arrays = em.frame.int_arrays
    if base not in arrays:
        arrays[base] = em.fresh(base)
        em.frame.allocs.append(f'{arrays[base]} = T.alloc_buffer(({count},), "int32", scope="local")')
    return [f"{arrays[base]}[{i}]" for i in range(count)]


def nbytes(dtype: str) -> int:
    """Bytes per element of `dtype`."""
    bits = dtype_bits(dtype)
    if bits is None or bits % 8 or dtype == "handle":
        raise LoweringError(f"dtype '{dtype}' is not supported by the CUDA backend")
    return bits // 8


def view_root(buf):
    """The declared buffer (parameter or allocation) whose storage a view shares; `buf` itself if not a view."""
    while buf.base is not None:
        buf = buf.base
    return buf


def used_buffers(stmt):
    """Every buffer a statement reads or writes (loads, stores, tile-op regions), with repeats."""
    for node in walk(stmt):
        if isinstance(node, (N.Load, N.Store)):
            yield node.buffer
        elif isinstance(node, N.TILE_OPS):
            for side in op_regions(node):
                for r in side:
                    yield r.buffer


def reducer_buffers(func) -> set:
    """The reducer fragments of a kernel: the buffers its `finalize_reducer` calls combine."""
    return {n.args[0].buffer for n in walk(func.body) if isinstance(n, N.Call) and n.name == "finalize_reducer"}


def is_shared(buf) -> bool:
    """True for a buffer in shared memory."""
    return buf.scope in ("shared.dyn", "shared")


def shared_rw(stmt) -> tuple[bool, bool]:
    """(reads shared memory, writes shared memory) for a statement."""
    reads = writes = False
    for node in walk(stmt):
        if isinstance(node, N.Load) and is_shared(node.buffer):
            reads = True
        elif isinstance(node, N.Store) and is_shared(node.buffer):
            writes = True
        elif isinstance(node, N.TILE_OPS):
            rs, ws = op_regions(node)
            reads |= any(is_shared(r.buffer) for r in rs)
            writes |= any(is_shared(w.buffer) for w in ws)
    return reads, writes
