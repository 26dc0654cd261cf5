"""How many lanes a `T.vectorized` loop is emitted with: TVM turns a vectorised loop over contiguous elements into
one access of up to 16 bytes (`uint4`, `float4`), as TileLang does; 0 keeps the loop serial."""
from __future__ import annotations

from ...analysis.infer import dtype_bits
from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.visitor import flat_stmts, walk
from .copy import divisibility
from .threads import THREAD_INDEX

MAX_BYTES = 16  # the widest vector access a thread issues (128 bits)
_SCOPES = ("global", "local", "local.var")  # tensors and per-thread arrays: plain (unswizzled) addressing
_EXPRS = (N.Const, N.Var, N.BinOp, N.Cast, N.Load)
_CALLS = (*THREAD_INDEX, "infinity", "max_value", "min_value")  # calls a vector lane computes alike: one broadcast


def lanes(loop: N.For) -> int:
    """Lanes of the vectorised inner loop for `loop` (its extent, or the largest power of two dividing it whose
    elements fit 16 bytes and whose vectors every access keeps aligned), 0 when its body is more than element moves and arithmetic over tensors and
    per-thread arrays (a call other than a thread index, a branch, a shared tile or a fragment keeps the loop serial)."""
    ext = as_int(loop.extents[0]) if len(loop.vars) == 1 and loop.step is None else None
    if ext is None or ext < 2 or as_int(loop.starts[0]) is None:
        return 0
    widest, accesses = 0, []
    for stmt in flat_stmts(loop.body):
        if not isinstance(stmt, N.Store):
            return 0
        if dtype_bits(stmt.buffer.dtype) == 8 and _index_in_value(stmt.value, loop.vars[0]):
            return 0  # TVM's CUDA code has no vector of 8-bit values built from the lanes' indices (make_int, fp8x4)
        for node in walk(stmt):
            if not isinstance(node, (N.Store, *_EXPRS)) and not (isinstance(node, N.Call) and node.name in _CALLS):
                return 0
            if isinstance(node, (N.Store, N.Load)):
                bits = dtype_bits(node.buffer.dtype)
                if node.buffer.scope not in _SCOPES or not bits or bits % 8:
                    return 0
                widest = max(widest, bits // 8)
                accesses.append(node)
    v = 1
    while ext % (v * 2) == 0 and v * 2 * widest <= MAX_BYTES and all(
            _aligned(a, loop, v * 2) for a in accesses):
        v *= 2
    return v if v > 1 else 0


def _aligned(access, loop: N.For, lanes: int) -> bool:
    """True when `access` (a Load or Store) reads `lanes` consecutive elements starting at a multiple of `lanes`
    for every vector of the loop: its loop variable only in the last index, added once, everything else there
    (and the loop's start) a multiple of `lanes`, and rows of the buffer a multiple of `lanes` long."""
    var = loop.vars[0]
    *rows, last = access.indices
    if any(n is var for i in rows for n in walk(i)):
        return False
    terms = _addends(last)
    mine = [t for t in terms if t is var]
    rest = [t for t in terms if t is not var]
    if len(mine) != 1 or any(n is var for t in rest for n in walk(t)):
        return False
    row = as_int(access.buffer.shape[-1]) if len(access.indices) > 1 else lanes
    return (row is not None and row % lanes == 0 and divisibility(loop.starts[0]) % lanes == 0
            and all(divisibility(t) % lanes == 0 for t in rest))


def _index_in_value(value, var) -> bool:
    """True when the loop variable is part of a stored value itself (not only of the indices of its loads)."""
    uses = sum(1 for n in walk(value) if n is var)
    in_loads = sum(1 for ld in walk(value) if isinstance(ld, N.Load) for i in ld.indices for n in walk(i) if n is var)
    return uses > in_loads


def _addends(e) -> list:
    if isinstance(e, N.BinOp) and e.op == "+":
        return _addends(e.lhs) + _addends(e.rhs)
    return [e]
