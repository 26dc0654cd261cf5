"""Which statement a tile-configuration mismatch comes from: the instance's IR and a disagreeing configuration's
are walked side by side (they differ only in constants), and a statement is suspect when a loop covers a
different part of a tensor axis at the two configurations, when a block or loop variable is scaled by another
tile size than everywhere else once the sizes differ, or when one element of a per-row scratch value is read
where the other accesses take the row's own."""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import nodes as N
from ..ir.arith import as_int
from ..ir.visitor import children, walk
from ..source import Span

STATEMENTS = (N.Store, N.Copy, N.Gemm, N.Fill, N.Reduce, N.CumSum, N.AtomicAdd, N.For, N.If, N.LetStmt,
              N.Evaluate)


@dataclass(frozen=True)
class Suspect:
    """A statement that likely causes a mismatch, and why (a phrase)."""

    span: Span
    reason: str


def suspects(base: N.PrimFunc, other: N.PrimFunc) -> list[Suspect]:
    """The suspect statements, most specific first ([] when the two IRs differ in more than constants)."""
    pairs = _paired(base, other)
    if pairs is None:
        return []
    return _coverage(pairs) + _odd_scale(base, pairs) + _prefetch_into_read_stage(base) + _constant_row(base)


def _paired(base: N.PrimFunc, other: N.PrimFunc):
    """The two pre-order walks zipped, each node with its enclosing statement's span; None if they differ in
    shape."""
    a, b = list(walk(base.body)), list(walk(other.body))
    if len(a) != len(b) or any(type(x) is not type(y) for x, y in zip(a, b)):
        return None
    out, span = [], None
    for x, y in zip(a, b):
        if isinstance(x, STATEMENTS) and x.span is not None:
            span = x.span
        out.append((x, y, span))
    return out


def _coverage(pairs) -> list[Suspect]:
    """Serial / pipelined loops whose trips times step along a global axis cover a different part of it."""
    out = []
    for x, y, span in pairs:
        if not isinstance(x, N.For) or x.kind not in ("serial", "pipelined") or len(x.vars) != 1:
            continue
        cx, cy = _covered(x), _covered(y)
        for key in cx.keys() & cy.keys():
            (got_x, size), (got_y, _) = cx[key], cy[key]
            if got_x != got_y and min(got_x, got_y) < size:
                name, axis = key
                out.append(Suspect(x.span or span, f"the `{x.vars[0].name}` loop covers {got_x} of the {size} "
                                   f"elements of {name}'s axis {axis} at this configuration and {got_y} at the "
                                   "other: its trip count and the step of its offsets use different tile sizes"))
                break
    return out


def _covered(loop: N.For) -> dict:
    """(tensor name, axis) -> (elements the loop's offsets reach, axis size) for the global accesses in its body."""
    var, trips = loop.vars[0], as_int(loop.extents[0])
    if trips is None:
        return {}
    out = {}
    for node in walk(loop.body):
        for buf, axis, idx, extent in _accesses(node):
            step, size = _coef(idx, var), as_int(buf.shape[axis]) if axis < len(buf.shape) else None
            if buf.scope == "global" and step and size:  # a head address's extent is its tile's: one step each
                reach = trips * step if extent is None else (trips - 1) * step + extent
                out.setdefault((buf.name, axis), (min(reach, size), size))
    return out


def _odd_scale(base: N.PrimFunc, pairs) -> list[Suspect]:
    """Occurrences of a block or loop variable whose scale stayed put while its other occurrences' scale followed
    the changed tile size (or the reverse): they agreed at the instance only because the sizes were equal."""
    twins = {a: b for x, y, _ in pairs if isinstance(x, (N.Launch, N.For))
             for a, b in (zip(x.block_vars, y.block_vars) if isinstance(x, N.Launch) else zip(x.vars, y.vars))}
    out = []
    for var, twin in twins.items():
        seen = []  # (span, scale at the instance, scale at the other configuration)
        for x, y, span in pairs:
            for ex, ey in _scaled_exprs(x, y):
                sx, sy = _coef(ex, var), _coef(ey, twin)
                if sx and sy and span is not None:
                    seen.append((span, sx, sy))
        if len({sx for _, sx, _ in seen}) != 1 or len({sy for _, _, sy in seen}) != 2:
            continue
        moved = [s for s in seen if s[1] != s[2]]
        kept = [s for s in seen if s[1] == s[2]]
        odd = min((moved, kept), key=len) if len(moved) != len(kept) else []
        for span, sx, sy in odd[:1]:
            out.append(Suspect(span, f"`{var.name}` is scaled by {sy} here at the other configuration but by "
                               f"{(kept if odd is moved else moved)[0][2]} everywhere else (both were {sx} at this "
                               "one): this offset uses another tile size than the rest of the kernel"))
    return out


def _scaled_exprs(x, y) -> list:
    """The index and comparison expressions of a node and of its twin, paired."""
    if isinstance(x, (N.Load, N.Store)):
        return list(zip(x.indices, y.indices))
    if isinstance(x, N.Region):
        return [(a.start, b.start) for a, b in zip(x.axes, y.axes)]
    if isinstance(x, N.Compare):
        return [(x.lhs, y.lhs), (x.rhs, y.rhs)]
    return []


def _prefetch_into_read_stage(base: N.PrimFunc) -> list[Suspect]:
    """A copy in a loop that fetches a later iteration's tile (its global offset is ahead of the loop variable's
    step) into the stage of a multi-stage scratch buffer that the same iteration reads."""
    from ..ir.printer import expr_str

    out = []
    for loop in walk(base.body):
        if not isinstance(loop, N.For) or len(loop.vars) != 1:
            continue
        var, body = loop.vars[0], list(walk(loop.body))
        reads = {(r.buffer, expr_str(r.axes[0].start)) for n in body for r in _read_regions(n) if r.axes}
        for n in body:
            if not isinstance(n, N.Copy) or n.dst.buffer.scope == "global" or not n.dst.axes or n.span is None:
                continue
            stage = n.dst.axes[0].start
            if not any(v is var for v in walk(stage)) or not _ahead(n.src, var):
                continue
            if (n.dst.buffer, expr_str(stage)) in reads:
                out.append(Suspect(n.span, f"this copy fetches a later iteration's tile into stage "
                                   f"{expr_str(stage)} of {n.dst.buffer.name}, the stage this iteration reads: it "
                                   "overwrites the data before it is used (fetch into the next stage)"))
                break
    return out


def _read_regions(n) -> list:
    if isinstance(n, N.Gemm):
        return [n.a, n.b]
    if isinstance(n, (N.Copy, N.Reduce)):
        return [n.src]
    return []


def _ahead(region: N.Region, var: N.Var) -> bool:
    """Whether a global region's offset along some axis is the loop variable's step beyond it ((k + 1) * step)."""
    if region.buffer.scope != "global":
        return False
    for ax in region.axes:
        step = _coef(ax.start, var)
        if step and step > 0 and _constant(ax.start, var) >= step:
            return True
    return False


def _constant(e, var) -> int:
    """The constant part of an expression linear in `var` with every other variable at 0 (0 when not linear)."""
    if isinstance(e, N.Const) and isinstance(e.value, int):
        return e.value
    if isinstance(e, N.BinOp) and e.op in ("+", "-"):
        a, b = _constant(e.lhs, var), _constant(e.rhs, var)
        return a + b if e.op == "+" else a - b
    if isinstance(e, N.BinOp) and e.op == "*":
        cl, cr = as_int(e.lhs), as_int(e.rhs)
        if cr is not None:
            return _constant(e.lhs, var) * cr
        if cl is not None:
            return _constant(e.rhs, var) * cl
    if isinstance(e, N.Cast):
        return _constant(e.value, var)
    return 0


def _constant_row(base: N.PrimFunc) -> list[Suspect]:
    """A fixed element of a scratch buffer's axis read inside a parallel loop, where every other access to that
    axis takes a loop variable (a per-row value read from one row for all)."""
    by_axis: dict = {}
    for node, loop_vars in _with_loops(base.body):
        if not isinstance(node, N.Load) or node.buffer.scope == "global":
            continue
        for axis, idx in enumerate(node.indices):
            size = as_int(node.buffer.shape[axis]) if axis < len(node.buffer.shape) else None
            if size and size > 1:
                kind = "const" if as_int(idx) is not None else "var" if isinstance(idx, N.Var) else "other"
                by_axis.setdefault((node.buffer, axis), []).append((kind, node, loop_vars))
    out = []
    for (buf, axis), uses in by_axis.items():
        kinds = {k for k, _, _ in uses}
        if kinds != {"const", "var"}:
            continue
        for kind, node, loops in uses:
            if kind == "const" and loops and node.span is not None:
                out.append(Suspect(node.span, f"{buf.name}[{', '.join(_show(i) for i in node.indices)}] reads one "
                                   f"element of axis {axis} for every iteration, where the kernel's other reads of "
                                   f"{buf.name} take the loop's own index"))
                break
    return out


def _with_loops(stmt):
    """Pre-order nodes, each with the parallel loop variables around it."""
    stack = [(stmt, ())]
    while stack:
        node, loops = stack.pop()
        yield node, loops
        inner = loops + tuple(node.vars) if isinstance(node, N.For) and node.kind == "parallel" else loops
        stack.extend((c, inner) for c in reversed(list(children(node))))


def _accesses(node) -> list:
    """(buffer, axis, index expression, extent or None) of a node's element or region accesses."""
    if isinstance(node, (N.Load, N.Store)):
        return [(node.buffer, k, i, None) for k, i in enumerate(node.indices)]
    if isinstance(node, N.Region):
        return [(node.buffer, k, a.start, as_int(a.extent) if a.sliced else None) for k, a in enumerate(node.axes)]
    return []


def _coef(e, var) -> int | None:
    """The integer coefficient of `var` in `e` when `e` is linear in it (0 when it does not occur), else None."""
    if isinstance(e, N.Var):
        return 1 if e is var else 0
    if isinstance(e, N.Const):
        return 0
    if isinstance(e, N.Cast):
        return _coef(e.value, var)
    if isinstance(e, N.BinOp) and e.op in ("+", "-"):
        a, b = _coef(e.lhs, var), _coef(e.rhs, var)
        return None if a is None or b is None else a + b if e.op == "+" else a - b
    if isinstance(e, N.BinOp) and e.op == "*":
        a, b = _coef(e.lhs, var), _coef(e.rhs, var)
        cl, cr = as_int(e.lhs), as_int(e.rhs)
        if cr is not None and a is not None:
            return a * cr
        if cl is not None and b is not None:
            return b * cl
    return 0 if not any(n is var for n in walk(e)) else None


def _show(e) -> str:
    from ..ir.printer import expr_str

    return expr_str(e)
