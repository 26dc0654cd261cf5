"""Re-base a T.Parallel loop that indexes a fragment at constant offsets of its variables onto the fragment.

Before (acc is 32x64, the loop covers rows 16..31):
    for i, j in T.Parallel(16, 64):
        S[i, j] = acc[i + 16, j]
After (the fragment's own coordinates drive the loop, the other rows are skipped):
    for i_t, j_t in T.Parallel(32, 64):
        if i_t >= 16 and i_t < 32 and j_t >= 0 and j_t < 64:
            S[i_t - 16, j_t] = acc[i_t, j_t]
"""
from __future__ import annotations

from ..ir import nodes as N
from ..ir.visitor import transform, walk


def index_shifts(indices, loop_vars) -> tuple | None:
    """(c0, c1, ...) when indices are `v0 + c0, v1 + c1, ...` with each c an expression free of the loop
    variables (a constant or an outer loop's variable), else None; c is None for a plain `v`."""
    if len(indices) != len(loop_vars):
        return None
    out = []
    for e, v in zip(indices, loop_vars):
        if e is v:
            out.append(None)
        elif isinstance(e, N.BinOp) and e.op in ("+", "-") and e.lhs is v and _free_of(e.rhs, loop_vars):
            out.append(e.rhs if e.op == "+" else N.BinOp("-", N.Const(0), e.rhs))
        elif isinstance(e, N.BinOp) and e.op == "+" and e.rhs is v and _free_of(e.lhs, loop_vars):
            out.append(e.lhs)
        else:
            return None
    return tuple(out)


def _free_of(e, loop_vars) -> bool:
    return not any(n is v for n in walk(e) for v in loop_vars) and not any(isinstance(n, N.Load) for n in walk(e))


def rebase_on_fragment(loop: N.For, bufs: set, shifts: tuple, shape: list[int]) -> N.For:
    """The loop over the fragments' full `shape` (`bufs` share one layout), guarded to the original iterations."""
    new_vars = tuple(N.Var(f"{v.name}_t", v.dtype, "loop", v.span) for v in loop.vars)

    def driver_access(node):
        if isinstance(node, (N.Load, N.Store)) and node.buffer in bufs and \
                index_shifts(node.indices, loop.vars) == shifts:
            return _with_indices(node, new_vars)
        return node

    old_to_new = {v: N.BinOp("-", u, c) if c is not None else u for v, u, c in zip(loop.vars, new_vars, shifts)}
    body = transform(transform(loop.body, driver_access), lambda n: old_to_new.get(n, n))
    conds = []
    for u, st, ext, c in zip(new_vars, loop.starts, loop.extents, shifts):
        lo = N.BinOp("+", st, c) if c is not None else st
        conds += [N.Compare(">=", u, lo), N.Compare("<", u, N.BinOp("+", lo, ext))]
    guarded = N.If(N.BoolOp("and", tuple(conds)), body, None, loop.span)
    return N.For(new_vars, tuple(N.Const(0) for _ in shape), tuple(N.Const(d) for d in shape), "parallel",
                 guarded, span=loop.span)


def _with_indices(node, indices):
    import dataclasses

    return dataclasses.replace(node, indices=tuple(indices))
