"""Where a kernel uses the values of its integer tensors as indices (page tables, offsets, lengths), and the range
of values each such use admits: an axis it addresses bounds the value, a loop it counts bounds the count."""
from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

from ..ir import nodes as N
from ..ir.arith import as_int
from ..ir.visitor import children, walk
from ..source import Span


@dataclass(frozen=True)
class IndexUse:
    """One place the values of integer tensor `param` address something: an axis of `target` (or, through a loop
    they count, what the loop variable addresses). Values in [low, limit) keep this access inside `target` (low is 1
    for a loop count: a length of 0 is the degenerate case); `scatter`: the access writes a tensor of the kernel (its
    entries must be distinct)."""

    param: N.Buffer
    target: N.Buffer
    axis: int
    low: int
    limit: int
    scatter: bool
    span: Span | None
    read_at: Span | None = None  # where the index value is read from `param`


@dataclass(frozen=True)
class _Origin:
    """An expression built from one integer tensor's value v: ~ v * scale, or (count) a loop variable that runs
    below ceil(v * scale) times `step`."""

    param: N.Buffer
    scale: Fraction
    count: bool = False
    step: Fraction = Fraction(1)
    read_at: Span | None = None


def index_params(func: N.PrimFunc) -> list[N.Buffer]:
    """The integer tensor parameters of `func` (candidates for index tables)."""
    return [p for p in func.params if isinstance(p, N.Buffer) and _is_int(p.dtype)]


def offset_tables(func: N.PrimFunc) -> set:
    """The integer tensors read as cumulative offsets: two entries of one subtracted (`cu[b + 1] - cu[b]`, directly or
    through local names), whose values must not decrease."""
    ints = set(index_params(func))
    env: dict = {}
    out = set()
    for node in walk(func.body):
        if isinstance(node, N.LetStmt):
            o = _origin(node.value, env, ints)
            if o is not None and not o.count:
                env[node.var] = o
        elif isinstance(node, N.BinOp) and node.op == "-":
            a, b = _origin(node.lhs, env, ints), _origin(node.rhs, env, ints)
            if a is not None and b is not None and a.param is b.param and not (a.count or b.count):
                out.add(a.param)
    return out


def index_uses(func: N.PrimFunc) -> list[IndexUse]:
    """Every access of `func` whose index (or loop count) is built from an integer tensor parameter's value."""
    ints = set(index_params(func))
    if not ints:
        return []
    env: dict = {}
    scatter_regions: set = set()
    owner: dict = {}  # id of a tile op's region -> the op's span (where a finding about it points)
    uses: list[IndexUse] = []
    for node in walk(func.body):
        for child in children(node):
            if isinstance(child, N.Region):
                owner[id(child)] = node.span
        if isinstance(node, N.LetStmt):
            o = _origin(node.value, env, ints)
            if o is not None and not o.count:
                env[node.var] = o
        elif isinstance(node, N.For):
            for var, ext in zip(node.vars, node.extents):
                o = _origin(ext, env, ints)
                if o is not None and not o.count:
                    env[var] = _Origin(o.param, o.scale, count=True, read_at=o.read_at)
        elif isinstance(node, N.Copy) and node.dst.buffer.scope == "global":
            scatter_regions.add(id(node.dst))
        elif isinstance(node, (N.Load, N.Store)):
            scatter = isinstance(node, N.Store) and node.buffer.scope == "global"
            for axis, idx in enumerate(node.indices):
                uses += _use(idx, node.buffer, axis, 1, scatter, node.span, env, ints)
        elif isinstance(node, N.Region):
            for axis, ax in enumerate(node.axes):
                extent = as_int(ax.extent) if ax.sliced else 1
                uses += _use(ax.start, node.buffer, axis, extent or 1, id(node) in scatter_regions,
                             owner.get(id(node), node.span), env, ints)
    return uses


def _use(idx, target: N.Buffer, axis: int, extent: int, scatter: bool, span, env, ints) -> list[IndexUse]:
    o = _origin(idx, env, ints)
    size = as_int(target.shape[axis]) if axis < len(target.shape) else None
    if o is None or size is None or o.param is target:
        return []
    starts = size - extent + 1  # valid start positions along the axis
    if starts <= 0:
        return []
    if o.count:  # the loop runs ceil(v * scale) times, its variable times `step` addresses the axis
        per = -(-starts // o.step) if o.step > 0 else starts
        limit = int(Fraction(per) / o.scale) + 1
    else:
        limit = -(-Fraction(starts) // o.scale)
    return [IndexUse(o.param, target, axis, 1 if o.count else 0, max(int(limit), 1), scatter, span, o.read_at)]


def _origin(e, env: dict, ints: set) -> _Origin | None:
    """How `e` derives from one integer tensor's value (a load of it, a let or loop bound from one, scaled)."""
    if isinstance(e, N.Load):
        return _Origin(e.buffer, Fraction(1), read_at=e.span) if e.buffer in ints else None
    if isinstance(e, N.Var):
        return env.get(e)
    if isinstance(e, N.Cast):
        return _origin(e.value, env, ints)
    if isinstance(e, N.Call) and e.name == "ceildiv" and len(e.args) == 2:
        return _divided(_origin(e.args[0], env, ints), as_int(e.args[1]))
    if not isinstance(e, N.BinOp):
        return None
    lhs, rhs = _origin(e.lhs, env, ints), _origin(e.rhs, env, ints)
    if e.op in ("+", "-"):
        return (lhs or rhs) if (lhs is None) != (rhs is None) else None
    if e.op == "*" and (lhs is None) != (rhs is None):
        c = as_int(e.rhs if lhs is not None else e.lhs)
        return _scaled(lhs or rhs, c)
    if e.op == "//" and lhs is not None and rhs is None:
        return _divided(lhs, as_int(e.rhs))
    return None


def _scaled(o: _Origin, c: int | None) -> _Origin | None:
    if c is None or c <= 0:
        return None
    if o.count:
        return _Origin(o.param, o.scale, True, o.step * c, o.read_at)
    return _Origin(o.param, o.scale * c, read_at=o.read_at)


def _divided(o: _Origin | None, c: int | None) -> _Origin | None:
    if o is None or o.count or c is None or c <= 0:
        return None
    return _Origin(o.param, o.scale / c, read_at=o.read_at)


def _is_int(dtype: str) -> bool:
    return dtype.startswith("int") or dtype.startswith("uint")


def scatter_use(func: N.PrimFunc, target: N.Buffer, span: Span | None = None) -> IndexUse | None:
    """The use of an integer tensor's values that indexes a write of `target` (the write at `span`, or any)."""
    for u in index_uses(func):
        if u.scatter and u.target is target and (span is None or u.span == span):
            return u
    return None


def written_buffer(n) -> N.Buffer | None:
    """The buffer a statement writes (an element store's, a tile op's destination), else None."""
    if isinstance(n, N.Store):
        return n.buffer
    if isinstance(n, (N.Copy, N.Fill, N.Reduce, N.CumSum, N.AtomicAdd)):
        return n.dst.buffer
    if isinstance(n, N.Gemm):
        return n.c.buffer
    return None


def write_sites(func: N.PrimFunc, target: N.Buffer) -> list[Span]:
    """The spans of the statements that write tensor `target`."""
    return [n.span for n in walk(func.body) if written_buffer(n) is target and n.span is not None]
