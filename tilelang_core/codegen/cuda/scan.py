"""CUDA lowering of `T.cumsum` / `T.cummax`: an inclusive (optionally reversed) prefix sum or running maximum
along one dimension.

Shared and global tiles: the lines along `dim` are spread over the block's threads and each thread scans
its lines serially into a register accumulator. Replicated fragments (every thread holds the whole tile)
are scanned by every thread. Other fragments are staged: each thread writes its elements to a shared copy,
the copy is scanned as a shared tile, and each thread reads its elements back.
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from ...passes.layout_kinds import Replicated
from .common import LoweringError
from .copy_sides import Side


def cumsum(em, op: N.CumSum) -> None:
    """Emit T.cumsum / T.cummax(src, dst, dim, reverse) through the statement emitter `em`."""
    src, dst = Side(op.src), Side(op.dst)
    staged = [b for b in dict.fromkeys((src.buf, dst.buf)) if b.scope == "local.fragment"
              and not isinstance(em.plan.layouts.get(b), Replicated)]
    for buf in staged:
        if em.plan.layouts.get(buf) is None:
            raise LoweringError(f"T.cum{op.op} of the fragment '{buf.name}': its layout is unknown; T.copy it to a "
                                "T.alloc_shared buffer, scan that, and copy back", op.span)
        em.stage_fragment(buf)  # loads and stores of `buf` now go to its shared copy
    _scan(em, op, src, dst, every_thread=not staged)
    for buf in staged:
        em.unstage_fragment(buf)


def _scan(em, op: N.CumSum, src: Side, dst: Side, every_thread: bool) -> None:
    if len(src.axes) != len(dst.axes) or not 0 <= op.dim < len(src.axes):
        raise LoweringError(f"T.cum{op.op} dim={op.dim} does not fit src and dst of ranks {len(src.axes)} and "
                            f"{len(dst.axes)}; give both the same shape", op.span)
    length = src.axes[op.dim].extent
    if as_int(length) is None:
        raise LoweringError(f"T.cum{op.op} needs the scanned extent known at compile time", op.span)
    acc = N.Buffer(f"{src.buf.name}_scan", (N.Const(1),), dst.buf.dtype, "local.var", op.span)
    em.frame.allocs.append(f'{em.name(acc)} = T.alloc_buffer((1,), "{acc.dtype}", scope="local")')
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
    x = N.Load(src.buf, index(src))
    total = N.BinOp("+", N.Load(acc, acc0), x) if op.op == "sum" else \
        N.Select(N.Compare("==", step, N.Const(0)), x, N.Call("max", (N.Load(acc, acc0), x), acc.dtype))
    scan = N.For((step,), (N.Const(0),), (length,), "serial",
                 N.SeqStmt((N.Store(acc, acc0, total), N.Store(dst.buf, index(dst), N.Load(acc, acc0)))))
    body = N.SeqStmt((N.Store(acc, acc0, N.Const(0, acc.dtype)), scan))
    extents = tuple(src.axes[k].extent for k in lines) or (N.Const(1),)
    line_vars = line_vars or [N.Var("l")]
    every_thread = every_thread and any(s.buf.scope in ("local.fragment", "local", "local.var") for s in (src, dst))
    loop = N.For(tuple(line_vars), tuple(N.Const(0) for _ in line_vars), extents, "serial", body, span=op.span)
    with em.parallel_scope.diverging():  # the lines are independent: no barrier inside the scan
        if every_thread:
            em.serial(loop)
        else:
            em.parallel_distributed(loop)
