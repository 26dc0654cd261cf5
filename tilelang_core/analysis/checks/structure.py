"""Nesting and annotation rules: nested T.Parallel, tile ops or T.Pipelined inside T.Parallel,
T.Pipelined order/stage lists, and T.annotate_layout shapes."""
from __future__ import annotations

from ...diagnostics import Related
from ...ir import nodes as N
from ...ir.arith import shape_ints
from ...ir.printer import expr_str
from ..bounds import mentions
from ..fastwalk import walk
from ..walker import Ctx, rule
from .common import related_for

_OP_NAMES = {N.Copy: "T.copy", N.Gemm: "T.gemm", N.Fill: "T.fill", N.Reduce: "T.reduce", N.CumSum: "T.cumsum",
             N.AtomicAdd: "T.atomic_add"}


def _outer(ctx: Ctx) -> tuple[Related, ...]:
    f = ctx.parallel[-1]
    return (Related(f.span, "inside this T.Parallel loop"),) if f.span else ()


@rule(N.For)
def check_loop_nesting(f: N.For, ctx: Ctx) -> None:
    """T.Parallel or T.Pipelined directly or indirectly inside a T.Parallel loop."""
    if not ctx.parallel:
        return
    if f.kind == "parallel" and ctx.fused is f:
        return  # `for i in T.Parallel(a): for j in T.Parallel(b):` with nothing else is one fused loop
    if f.kind == "parallel":
        names = ", ".join(v.name for v in (*ctx.parallel[-1].vars, *f.vars))
        ctx.emit("nested-parallel",
                 f"T.Parallel inside T.Parallel; write one loop over all the axes instead: "
                 f"for {names} in T.Parallel(...)", f.span, related=_outer(ctx))
    elif f.kind == "pipelined":
        ctx.emit("tile-op-in-parallel",
                 "T.Pipelined inside T.Parallel; T.Parallel bodies are element-wise: move the T.Pipelined "
                 "loop outside the T.Parallel loop", f.span, related=_outer(ctx))


@rule(*N.TILE_OPS)
def check_tile_op_in_parallel(op, ctx: Ctx) -> None:
    """A tile op (copy, gemm, fill, reduce, cumsum, tile atomic_add) inside a T.Parallel loop."""
    if not ctx.parallel:
        return
    if isinstance(op, N.AtomicAdd) and _scalar_atomic(op):
        return
    name = _OP_NAMES[type(op)]
    if isinstance(op, N.Reduce):
        name = f"T.reduce_{op.op}"
    if isinstance(op, N.Fill) and op.is_clear:
        name = "T.clear"
    ctx.emit("tile-op-in-parallel",
             f"{name} is a tile operation and cannot run inside T.Parallel (whose body is per element); "
             f"move it out of the loop, or write the element-wise statement instead",
             op.span, related=_outer(ctx))


def _scalar_atomic(op: N.AtomicAdd) -> bool:
    return op.dst.kind == "point" and not isinstance(op.value, N.Region)


@rule(N.For)
def check_pipeline_config(f: N.For, ctx: Ctx) -> None:
    """T.Pipelined num_stages >= 0, and order/stage lists of equal length that fit the loop body."""
    if f.kind != "pipelined":
        return
    if f.num_stages is not None and f.num_stages < 0:
        ctx.emit("pipeline-config", f"T.Pipelined num_stages is {f.num_stages}; use 0 (no pipelining) or more "
                 f"(2 or 3 is typical)", f.span)
        return
    order, stage = f.order, f.stage
    if order is None or stage is None:
        return
    if len(order) != len(stage):
        ctx.emit("pipeline-config",
                 f"T.Pipelined order has {len(order)} entries but stage has {len(stage)}; give one order and "
                 f"one stage entry per statement of the loop body", f.span)
        return
    n = _body_len(f.body)
    if n is not None and n != len(order):
        ctx.emit("pipeline-config",
                 f"T.Pipelined order/stage have {len(order)} entries but the loop body has {n} statements; "
                 f"give one entry per statement", f.span)
    elif sorted(order) != list(range(len(order))):
        ctx.emit("pipeline-config",
                 f"T.Pipelined order {list(order)} is not a permutation of 0..{len(order) - 1}; list each "
                 f"statement's position exactly once", f.span)
    elif any(s < 0 for s in stage):
        ctx.emit("pipeline-config", f"T.Pipelined stage {list(stage)} has a negative entry; stages start at 0",
                 f.span)


def _body_len(body) -> int | None:
    """Number of top-level statements of a loop body, or None when lets/allocations make it unclear."""
    stmts = body.stmts if isinstance(body, N.SeqStmt) else (body,)
    if any(isinstance(s, (N.LetStmt, N.Allocate, N.SeqStmt)) for s in stmts):
        return None
    return len(stmts)


@rule(N.AnnotateLayout)
def check_layout_shapes(a: N.AnnotateLayout, ctx: Ctx) -> None:
    """A layout given to T.annotate_layout whose input shape differs from its buffer's shape."""
    for buf, spec in a.entries:
        if buf.scope == "local.fragment" and spec.kind in ("layout", "swizzled", "linear"):
            ctx.emit("layout-kind-mismatch",
                     f"{buf.name} is a fragment, so its layout must be a T.Fragment (which also maps elements to "
                     f"threads), not a {'swizzled ' if spec.kind == 'swizzled' else ''}layout; build "
                     f"T.Fragment({buf.name}.shape, forward_thread_fn=...) or annotate a shared buffer instead",
                     spec.span or a.span, related=related_for(buf))
            continue
        shape = shape_ints(buf.shape)
        if spec.shape is None or shape is None or tuple(spec.shape) == shape:
            continue
        want = ", ".join(str(d) for d in shape)
        ctx.emit("layout-shape-mismatch",
                 f"the layout for {buf.name} is built for shape {tuple(spec.shape)} but {buf.name} is "
                 f"{'×'.join(map(str, shape))}; build the layout for ({want})",
                 spec.span or a.span, related=related_for(buf))


@rule(N.For)
def check_fragment_index_patterns(f: N.For, ctx: Ctx) -> None:
    """A fragment written in a T.Parallel nest and read there with an index pattern no write uses: the read
    needs an element another thread owns (TileLang miscompiles or rejects it). A transposed read of a
    fragment written elsewhere is legal: layout inference can choose a layout for it."""
    if f.kind != "parallel" or ctx.parallel:
        return
    pvars: set = set()
    writes: dict = {}
    loads: list = []
    for n in walk(f):
        if isinstance(n, N.For) and n.kind == "parallel":
            pvars.update(n.vars)
        elif isinstance(n, N.Store) and n.buffer.scope == "local.fragment":
            writes.setdefault(n.buffer, []).append(_pattern(n.indices))
        elif isinstance(n, N.Load) and n.buffer.scope == "local.fragment":
            loads.append(n)
    for n in loads:
        why = _cross_thread(n, writes.get(n.buffer), pvars)
        if why:
            ctx.emit("fragment-index-mismatch",
                     f"fragment {n.buffer.name} is read as {n.buffer.name}[{_pattern(n.indices)}] {why}; each "
                     f"thread only holds its own elements of a fragment, so this read needs another thread's "
                     f"value: stage it through a shared buffer", n.span, related=related_for(n.buffer))
            return


def _cross_thread(load: N.Load, written, pvars: set) -> str | None:
    """Why a fragment read inside a T.Parallel nest reaches another thread's element, or None."""
    if written is None or _pattern(load.indices) in written:
        return None
    if not any(mentions(i, pvars) for i in load.indices):
        return None
    return f"but written as {load.buffer.name}[{written[0]}] in the same T.Parallel loop"


def _pattern(indices) -> str:
    return ", ".join(expr_str(i) for i in indices)
