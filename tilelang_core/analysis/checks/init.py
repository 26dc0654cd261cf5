"""Read before write: a shared, fragment or local buffer read (or accumulated into) before anything initialised
it. Only certain cases are reported: no write of the buffer comes earlier in the kernel, none sits anywhere in a
loop around the read (a write later in the loop body may run first on an earlier iteration), and the buffer is set
somewhere in the IR (or the read is a T.gemm / T.reduce accumulation)."""
from __future__ import annotations

from ...diagnostics import Fix, TextEdit
from ...ir import nodes as N
from ...source import Span
from ..walker import Ctx, kernel_rule
from .accesses import Access, launches, root, thread_guards
from .common import related_for

_TRACKED = ("shared", "shared.dyn", "local.fragment", "local")


@kernel_rule
def check_uninitialized_reads(func: N.PrimFunc, ctx: Ctx) -> None:
    """The first read of each tile buffer that no earlier (or loop-carried) write initialised."""
    for acc in launches(func):
        _launch(acc, ctx)


def _launch(acc, ctx: Ctx) -> None:
    inits: dict = {}  # root buffer -> [Access] that set it (plain writes, atomics, opaque calls)
    for a in acc.items:
        if a.mode in ("write", "atomic", "opaque"):
            inits.setdefault(root(a.buffer), []).append(a)
    # with thread roles (branches on the thread index), shared memory is ordered by barriers between the roles,
    # not by the text: a shared buffer written anywhere counts as written
    roles = any(thread_guards(a) for a in acc.items)
    done: set = set()
    for a in acc.items:
        r = root(a.buffer)
        if r.scope not in _TRACKED or r in done or a.mode not in ("read", "accum"):
            continue
        if roles and r.scope.startswith("shared") and r in inits:
            continue
        if r not in inits and not (a.mode == "accum" and isinstance(a.op, (N.Gemm, N.Reduce))):
            continue  # never set in the IR: a construct the checker does not model (a macro emitter, an extern
            # helper whose statement the frontend could not evaluate) may set it, so only tile-op accumulations count
        if any(w.pos < a.pos or _same_loop(w, a) or _other_role(w, a) for w in inits.get(r, ())):
            continue
        done.add(r)
        ctx.emit("uninitialized-read", _message(a, r), a.span, related=related_for(r), fix=_init_fix(a, r))


def _same_loop(w: Access, a: Access) -> bool:
    """True when a loop encloses both the write and the read (the write may run on an earlier iteration)."""
    return any(any(f is g for g in w.loops) for f in a.loops)


def _other_role(w: Access, a: Access) -> bool:
    """True when the write and the read sit in different branches on the thread index (warp-specialised roles run
    at the same time and order their accesses through barriers, not program order)."""
    return thread_guards(w) != thread_guards(a) and bool(thread_guards(w)) and bool(thread_guards(a))


def _message(a: Access, buf: N.Buffer) -> str:
    name = buf.name
    op = a.op
    if isinstance(op, N.Gemm) and a.mode == "accum":
        return (f"T.gemm accumulates into {name} (C += A·B) but nothing initialised {name}, so the sum starts from "
                f"whatever the registers held; call T.clear({name}) before the loop, or pass clear_accum=True")
    if isinstance(op, N.Reduce) and a.mode == "accum":
        start = {"max": "-T.infinity(dtype)", "min": "T.infinity(dtype)"}.get(op.op, "0")
        return (f"T.reduce_{op.op}(..., clear=False) combines the result with the current contents of {name}, "
                f"but nothing initialised {name}; T.fill({name}, {start}) before the loop, or drop clear=False")
    by = {N.Copy: " by T.copy", N.Gemm: " by T.gemm", N.Reduce: " by the reduction", N.CumSum: " by T.cumsum",
          N.AtomicAdd: " by T.atomic_add"}.get(type(op), "")
    return (f"{name} is read here{by} before anything wrote it, so it holds whatever {_where(buf)} held; write "
            f"{name} first (T.copy into it, T.fill/T.clear, or assign its elements) or read the buffer that holds "
            f"the data")


def _init_fix(a: Access, buf: N.Buffer) -> Fix | None:
    """For a T.gemm / T.reduce accumulation: insert the initialisation on its own line before the outermost loop
    around it (or before the statement itself)."""
    if a.mode != "accum" or not isinstance(a.op, (N.Gemm, N.Reduce)) or buf.base is not None:
        return None
    at = a.loops[0].span if a.loops else a.op.span
    if at is None:
        return None
    start = {"max": f'-T.infinity("{buf.dtype}")', "min": f'T.infinity("{buf.dtype}")'}.get(getattr(a.op, "op", ""))
    stmt = f"T.fill({buf.name}, {start})" if start else f"T.clear({buf.name})"
    where = "before the loop" if a.loops else "before it"
    return Fix(f"Initialise {buf.name} with {stmt} {where}", (TextEdit(Span(at.line, 0, at.line, 0),
                                                                   " " * at.col + stmt + "\n"),))


def _where(buf: N.Buffer) -> str:
    return "shared memory" if buf.scope.startswith("shared") else "the registers"
