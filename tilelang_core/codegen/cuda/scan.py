"""CUDA lowering of `T.cumsum`: an inclusive (optionally reversed) prefix sum along one dimension.

Shared and global tiles: the lines along `dim` are spread over the block's threads and each thread scans
its lines serially into a register accumulator. Replicated fragments (every thread holds the whole tile)
are scanned by every thread. Other fragments are rejected (copy them to shared memory first).
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from ...passes.layout_kinds import Replicated
from .common import LoweringError
from .copy import Side


def cumsum(em, op: N.CumSum) -> None:
    """Emit T.cumsum(src, dst, dim, reverse) through the statement emitter `em`."""
    src, dst = Side(op.src), Side(op.dst)
    for side in (src, dst):
        lay = em.layouts.get(side.buf)
        if side.buf.scope == "local.fragment" and not isinstance(lay, Replicated):
            raise LoweringError(f"T.cumsum of the fragment '{side.buf.name}' (layout "
                                f"{lay.describe() if lay else 'unknown'}) is not supported by the CUDA lowering; "
                                "T.copy it to a T.alloc_shared buffer, scan that, and copy back", op.span)
    if len(src.axes) != len(dst.axes) or not 0 <= op.dim < len(src.axes):
        raise LoweringError(f"T.cumsum dim={op.dim} does not fit src and dst of ranks {len(src.axes)} and "
                            f"{len(dst.axes)}; give both the same shape", op.span)
    length = src.axes[op.dim].extent
    if as_int(length) is None:
        raise LoweringError("T.cumsum needs the scanned extent known at compile time", op.span)
    acc = N.Buffer(f"{src.buf.name}_scan", (N.Const(1),), dst.buf.dtype, "local.var", op.span)
    em.allocs.append(f'{em.name(acc)} = T.alloc_buffer((1,), "{acc.dtype}", scope="local")')
    lines = [k for k in range(len(src.axes)) if k != op.dim]
    line_vars = [N.Var(f"l{k}") for k in lines]
    step = N.Var("k")
    at = N.BinOp("-", N.Const(as_int(length) - 1), step) if op.reverse else step

    def index(side: Side) -> tuple:
        coords = dict(zip(lines, line_vars))
        coords[op.dim] = at
        return tuple(N.BinOp("+", a.start, coords[k]) if as_int(a.start) != 0 else coords[k]
                     for k, a in enumerate(side.axes))

    acc0 = (N.Const(0),)
    total = N.BinOp("+", N.Load(acc, acc0), N.Load(src.buf, index(src)))
    scan = N.For((step,), (N.Const(0),), (length,), "serial",
                 N.SeqStmt((N.Store(acc, acc0, total), N.Store(dst.buf, index(dst), N.Load(acc, acc0)))))
    body = N.SeqStmt((N.Store(acc, acc0, N.Const(0, acc.dtype)), scan))
    extents = tuple(src.axes[k].extent for k in lines) or (N.Const(1),)
    line_vars = line_vars or [N.Var("l")]
    every_thread = any(s.buf.scope in ("local.fragment", "local", "local.var") for s in (src, dst))
    loop = N.For(tuple(line_vars), tuple(N.Const(0) for _ in line_vars), extents, "serial", body, span=op.span)
    em.in_parallel += 1  # the lines are independent: no barrier inside the scan
    try:
        if every_thread:
            em.serial(loop)
        else:
            em._parallel_distributed(loop)
    finally:
        em.in_parallel -= 1
