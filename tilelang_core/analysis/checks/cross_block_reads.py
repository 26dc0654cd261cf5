"""Cross-block reads: a block reads elements of a global tensor that another block of the same launch writes
(no T.sync_grid, no atomic read). The CPU backend runs the blocks one after another, so the read sees the other
block's result (or never does) in a fixed order; on the GPU the blocks run at once and the read races the write.
An input updated in place whose reads ignore a block index its writes follow is the inplace-hazard rule's
(checks/params.py `inplace_hit`)."""
from __future__ import annotations

from itertools import product

from ...diagnostics import Related
from ...ir import nodes as N
from ...ir.arith import as_int
from ..bounds import Interval, bound
from ..fastwalk import walk
from ..walker import Ctx, kernel_rule, substitute
from .accesses import access_env, has_load, launches, root
from .common import related_for
from .params import inplace_hit

WRITE_MODES = ("write", "accum", "atomic")
ORDERING_CALLS = ("sync_grid", "atomic_load", "atomic_store", "ld_acquire", "st_release")  # cross-block protocols
PROBE = 3  # blocks probed along a grid axis of unknown extent


@kernel_rule
def check_cross_block_reads(func: N.PrimFunc, ctx: Ctx) -> None:
    """Reads of global elements that another block of the launch writes."""
    for acc in launches(func):
        if _orders_blocks(acc.launch):
            continue
        axes = _block_points(acc.launch)
        if not axes:
            continue
        globals_ = {}
        for a in acc.items:
            r = root(a.buffer)
            if r.scope == "global" and a.axes is not None:
                globals_.setdefault(r, []).append(a)
        for buf, items in globals_.items():
            writes = [a for a in items if a.mode in WRITE_MODES]
            reads = [a for a in items if a.mode in ("read", "accum")]
            if writes and reads and not _spin_waited(buf, acc.launch) and inplace_hit(acc, items) is None:
                _buffer(buf, reads, writes, axes, acc.launch, ctx)


def _orders_blocks(launch: N.Launch) -> bool:
    """True when the launch synchronises its blocks itself (T.sync_grid, acquire/release atomics)."""
    return any(isinstance(n, N.Call) and n.name in ORDERING_CALLS for n in walk(launch.body))


def _spin_waited(buf: N.Buffer, launch: N.Launch) -> bool:
    """True when a `while` condition reads the tensor (a flag other blocks set: a deliberate protocol)."""
    return any(isinstance(n, N.While) and any(isinstance(m, N.Load) and root(m.buffer) is buf for m in walk(n.cond))
               for n in walk(launch.body))


def _block_points(launch: N.Launch) -> list:
    """[(block Var, the indices probed)] per grid axis of more than one block: the first two and the last two."""
    out = []
    for v, g in zip(launch.block_vars, launch.grid):
        n = as_int(g)
        if n is not None and n < 2:
            continue
        pts = sorted({0, 1, n - 2, n - 1}) if n is not None else list(range(PROBE))
        out.append((v, pts))
    return out


def _buffer(buf, reads, writes, axes, launch, ctx: Ctx) -> None:
    blocks = [dict(zip([v for v, _ in axes], pts)) for pts in product(*[p for _, p in axes])]
    boxes_w = [(w, [(b, _box(w, b)) for b in blocks]) for w in writes]
    for r in reads:
        for b in blocks:
            rbox = _box(r, b)
            if rbox is None:
                continue
            for w, wboxes in boxes_w:
                if w is r:
                    continue
                other = next((wb for wb, box in wboxes if wb != b and box is not None and _meets(rbox, box)), None)
                if other is not None:
                    _report(buf, r, w, b, other, launch, ctx)
                    return


def _box(a, block: dict) -> list | None:
    """Per axis, the elements [lo, hi] access `a` touches in block `block`; None when unknown or when the access's
    guards rule the block out."""
    env = {v: Interval.point(i) for v, i in block.items()}
    env = access_env(a, env)
    if env is None:
        return None
    for g in a.guards:
        if _holds(substitute(g, a.lets), env) is False:
            return None
    out = []
    for start, ext in a.axes:
        s = substitute(start, a.lets)
        if has_load(s):
            return None
        lo, n = bound(s, env), bound(substitute(ext, a.lets), env)
        if lo is None or n is None or n.hi < 1:
            return None
        out.append((lo.lo, lo.hi + n.hi - 1))
    return out


def _meets(a: list, b: list) -> bool:
    return len(a) == len(b) and all(x0 <= y1 and y0 <= x1 for (x0, x1), (y0, y1) in zip(a, b))


def _holds(cond, env) -> bool | None:
    """Whether a guard holds for every value in `env` (True), for none (False), or either (None)."""
    if isinstance(cond, N.UnaryOp) and cond.op == "not":
        inner = _holds(cond.operand, env)
        return None if inner is None else not inner
    if isinstance(cond, N.BoolOp):
        parts = [_holds(v, env) for v in cond.values]
        if cond.op == "and":
            return False if False in parts else True if all(p is True for p in parts) else None
        return True if True in parts else False if all(p is False for p in parts) else None
    if not isinstance(cond, N.Compare):
        return None
    lhs, rhs = bound(cond.lhs, env), bound(cond.rhs, env)
    if lhs is None or rhs is None:
        return None
    tests = {"<": (lhs.hi < rhs.lo, lhs.lo >= rhs.hi), "<=": (lhs.hi <= rhs.lo, lhs.lo > rhs.hi),
             ">": (lhs.lo > rhs.hi, lhs.hi <= rhs.lo), ">=": (lhs.lo >= rhs.hi, lhs.hi < rhs.lo),
             "==": (lhs.lo == lhs.hi == rhs.lo == rhs.hi, lhs.hi < rhs.lo or rhs.hi < lhs.lo),
             "!=": (lhs.hi < rhs.lo or rhs.hi < lhs.lo, lhs.lo == lhs.hi == rhs.lo == rhs.hi)}
    yes, no = tests.get(cond.op, (False, False))
    return True if yes else False if no else None


def _block_text(block: dict) -> str:
    return ", ".join(f"{v.name}={i}" for v, i in block.items())


def _report(buf, r, w, reader: dict, writer: dict, launch: N.Launch, ctx: Ctx) -> None:
    if any(d.code == "cross-block-read" and d.span == r.span for d in ctx.sink.items):
        return  # another instance of the kernel reported this read (with its own block numbers)
    line = w.span.line if w.span is not None else None
    related = ((Related(w.span, f"block ({_block_text(writer)}) writes these elements here"),) if w.span else ())
    verb = "adds to" if w.mode == "atomic" else "writes"
    ctx.emit("cross-block-read",
             f"block ({_block_text(reader)}) reads elements of {buf.name} that block ({_block_text(writer)}) "
             f"{verb}{f' at line {line}' if line else ''} in the same launch: the GPU runs the blocks at once, so "
             f"the read races the write (the CPU backend runs the blocks in turn and hides it); read only what this "
             f"block writes itself, or move the read into a second kernel launched after this one (or T.sync_grid() "
             f"between write and read in a cooperative kernel)",
             r.span, related=related + related_for(buf))
