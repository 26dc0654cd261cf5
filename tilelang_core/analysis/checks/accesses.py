"""Every buffer access of one T.Kernel launch in program order, for the data-flow rules (init, coverage,
reduction axis, races, parameters): what is read or written, which region, under which loops, guards and lets."""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import nodes as N
from ..bounds import Interval, bound, loop_interval
from ..fastwalk import walk
from ..infer import region_extents, region_starts
from ..walker import substitute
from .copy import legalize

# modes: "read"; "write" (sets the region without reading it); "accum" (reads then writes: gemm without
# clear_accum, reduce with clear=False, `x[i] = x[i] + ...`); "atomic"; "opaque" (an address taken or an
# intrinsic call: may read or write)
WRITES = ("write", "accum", "atomic", "opaque")


@dataclass
class Access:
    """One access: the buffer, its mode, per-axis (start, extent) or None, and where it happens."""

    buffer: N.Buffer
    mode: str
    axes: tuple | None
    pos: int
    op: object
    span: object
    loops: tuple  # enclosing For/While nodes inside the launch, outermost first
    guards: tuple  # conditions of the enclosing If/While statements
    lets: dict  # let Var -> value, as bound at this point
    source: "Access | None" = None  # a T.copy destination's source side


@dataclass
class LaunchAccesses:
    """The accesses of one launch and the launch itself."""

    launch: N.Launch
    items: list

    def of(self, buf: N.Buffer) -> list:
        """The accesses of one buffer (or of views sharing its storage)."""
        r = root(buf)
        return [a for a in self.items if root(a.buffer) is r]


THREAD_INDEX = ("get_thread_binding", "get_lane_idx", "get_warp_idx", "get_warp_group_idx")


def thread_guards(acc: Access) -> tuple:
    """The conditions on the thread index around an access (the branches of a warp-specialised kernel's roles)."""
    return tuple(g for g in acc.guards if any(isinstance(n, N.Call) and n.name in THREAD_INDEX
                                              or isinstance(n, N.Var) and n.kind == "thread" for n in walk(g)))


def root(buf: N.Buffer) -> N.Buffer:
    """The buffer whose storage a view shares (the buffer itself when it is not a view)."""
    seen = 0
    while buf.base is not None and seen < 16:
        buf, seen = buf.base, seen + 1
    return buf


class _Collector:
    def __init__(self, launch: N.Launch) -> None:
        self.out = LaunchAccesses(launch, [])
        self.pos = 0

    def add(self, buf, mode, axes, op, span, st) -> Access:
        loops, guards, lets = st
        a = Access(buf, mode, axes, self.pos, op, span, loops, guards, dict(lets))
        self.out.items.append(a)
        self.pos += 1
        return a

    def expr(self, e, op, st) -> None:
        """Record the loads (reads) and taken addresses (opaque) inside an expression."""
        if e is None:
            return
        for n in walk(e):
            if isinstance(n, N.Call) and n.name in ("access_ptr", "address_of"):
                for m in walk(n):
                    if isinstance(m, N.Load):
                        self.add(m.buffer, "opaque", None, op, m.span or getattr(op, "span", None), st)
            elif isinstance(n, N.Load):
                self.add(n.buffer, "read", tuple((i, N.Const(1)) for i in n.indices), op, n.span, st)

    def stmt(self, s, st) -> None:
        if s is None:
            return
        loops, guards, lets = st
        if isinstance(s, N.SeqStmt):
            for x in s.stmts:
                self.stmt(x, (loops, guards, lets))
                if isinstance(x, N.LetStmt):
                    lets = {**lets, x.var: x.value}
            return
        if isinstance(s, N.LetStmt):
            self.expr(s.value, s, st)
        elif isinstance(s, N.For):
            for e in (*s.starts, *s.extents):
                self.expr(e, s, st)
            self.stmt(s.body, (loops + (s,), guards, lets))
        elif isinstance(s, N.While):
            self.expr(s.cond, s, st)
            self.stmt(s.body, (loops + (s,), guards + (s.cond,), lets))
        elif isinstance(s, N.If):
            self.expr(s.cond, s, st)
            self.stmt(s.then_body, (loops, guards + (s.cond,), lets))
            self.stmt(s.else_body, (loops, guards + (N.UnaryOp("not", s.cond),), lets))
        elif isinstance(s, N.Store):
            for i in s.indices:
                self.expr(i, s, st)
            self.expr(s.value, s, st)
            reads_self = any(isinstance(n, N.Load) and root(n.buffer) is root(s.buffer) for n in walk(s.value))
            self.add(s.buffer, "accum" if reads_self else "write", tuple((i, N.Const(1)) for i in s.indices), s,
                     s.span, st)
        elif isinstance(s, N.Evaluate):
            for n in walk(s.value):
                if isinstance(n, (N.Load, N.Region)):
                    self.add(n.buffer, "opaque", None, s, s.span, st)
        elif isinstance(s, N.Allocate):
            if s.init is not None:
                self.expr(s.init, s, st)
                self.add(s.buffer, "write", None, s, s.span, st)
        elif isinstance(s, N.Launch):
            return  # a nested launch is collected on its own
        elif isinstance(s, N.TILE_OPS):
            self.tile_op(s, st)

    def region(self, r: N.Region, op, st, extents=None):
        for ax in r.axes:
            self.expr(ax.start, op, st)
        ext = extents if extents is not None else region_extents(r)
        return tuple(zip(region_starts(r), ext))

    def tile_op(self, s, st) -> None:
        if isinstance(s, N.Copy):
            src_ext, dst_ext = region_extents(s.src), region_extents(s.dst)
            legal = legalize(src_ext, dst_ext)
            ok = isinstance(legal, tuple) and len(legal) == 2 and isinstance(legal[0], list)
            src_ax = self.region(s.src, s, st, legal[0] if ok else None)
            dst_ax = self.region(s.dst, s, st, legal[1] if ok else None)
            src = self.add(s.src.buffer, "read", src_ax if ok or s.src.kind != "point" else None, s,
                           s.src.span or s.span, st)
            dst = self.add(s.dst.buffer, "write", dst_ax if ok or s.dst.kind != "point" else None, s,
                           s.dst.span or s.span, st)
            dst.source = src
        elif isinstance(s, N.Gemm):
            for r in (s.a, s.b):
                self.add(r.buffer, "read", self.region(r, s, st), s, r.span or s.span, st)
            clear = s.clear_accum if isinstance(s.clear_accum, bool) else True
            self.add(s.c.buffer, "write" if clear else "accum", self.region(s.c, s, st), s, s.c.span or s.span, st)
        elif isinstance(s, N.Fill):
            self.expr(s.value, s, st)
            self.add(s.dst.buffer, "write", self.region(s.dst, s, st), s, s.dst.span or s.span, st)
        elif isinstance(s, N.Reduce):
            self.add(s.src.buffer, "read", self.region(s.src, s, st), s, s.src.span or s.span, st)
            self.add(s.dst.buffer, "write" if s.clear else "accum", self.region(s.dst, s, st), s,
                     s.dst.span or s.span, st)
        elif isinstance(s, N.CumSum):
            self.add(s.src.buffer, "read", self.region(s.src, s, st), s, s.src.span or s.span, st)
            self.add(s.dst.buffer, "write", self.region(s.dst, s, st), s, s.dst.span or s.span, st)
        elif isinstance(s, N.AtomicAdd):
            if isinstance(s.value, N.Region):
                ext = region_extents(s.value)
                self.add(s.value.buffer, "read", self.region(s.value, s, st), s, s.value.span or s.span, st)
                axes = self.region(s.dst, s, st, None if s.dst.kind != "point" else _point_extents(s.dst, ext))
            else:
                self.expr(s.value, s, st)
                axes = self.region(s.dst, s, st)
            self.add(s.dst.buffer, "atomic", axes, s, s.dst.span or s.span, st)


def _point_extents(dst: N.Region, value_ext) -> tuple:
    """The extents a head-address destination takes from the value tile (right-aligned, 1 elsewhere)."""
    n = len(dst.axes)
    ext = [N.Const(1)] * n
    for i in range(1, min(n, len(value_ext)) + 1):
        ext[-i] = value_ext[-i]
    return tuple(ext)


def collect(launch: N.Launch) -> LaunchAccesses:
    """Every access in one launch, in program order."""
    c = _Collector(launch)
    c.stmt(launch.body, ((), (), {}))
    return c.out


def _launch_nodes(s):
    """The Launch statements under `s` (statements only: a launch never sits inside an expression)."""
    if isinstance(s, N.Launch):
        yield s
    elif isinstance(s, N.SeqStmt):
        for x in s.stmts:
            yield from _launch_nodes(x)
    elif isinstance(s, (N.For, N.While)):
        yield from _launch_nodes(s.body)
    elif isinstance(s, N.If):
        yield from _launch_nodes(s.then_body)
        yield from _launch_nodes(s.else_body)


_recent: dict = {}  # id(kernel) -> (kernel, its accesses), for the kernels of the file checked last
RECENT = 64


def launches(func: N.PrimFunc) -> list[LaunchAccesses]:
    """The accesses of every launch of a kernel (top level or nested in statements), collected once per kernel
    (its data-flow rules and the schedule hazard checks after them share them)."""
    hit = _recent.get(id(func))
    if hit is not None and hit[0] is func:
        return hit[1]
    if len(_recent) >= RECENT:
        _recent.clear()
    out = [collect(n) for n in _launch_nodes(func.body)]
    _recent[id(func)] = (func, out)
    return out


def out_params(func: N.PrimFunc) -> list:
    """The tensor parameters named by the kernel's out_idx (negative indices count from the end)."""
    params = list(func.params)
    out = []
    for i in func.out_idx or ():
        if -len(params) <= i < len(params) and isinstance(params[i], N.Buffer) and params[i] not in out:
            out.append(params[i])
    return out


def grid_env(launch: N.Launch) -> dict:
    """Block index Var -> its full range, for the grid axes whose extent is known."""
    env = {}
    for v, g in zip(launch.block_vars, launch.grid):
        iv = loop_interval(N.Const(0), g, env)
        if iv is not None:
            env[v] = iv
    return env


def access_env(a: Access, env: dict) -> dict | None:
    """`env` extended with the ranges of the loops around an access (None when a loop bound is unknown)."""
    env = dict(env)
    for f in a.loops:
        if isinstance(f, N.While):
            return None
        step = f.step if len(f.vars) == 1 else None
        for v, s, e in zip(f.vars, f.starts, f.extents):
            iv = loop_interval(substitute(s, a.lets), substitute(e, a.lets), env, step)
            if iv is None:
                return None
            env[v] = iv
    return env


def start_of(a: Access, axis: int):
    """The start expression of one axis of an access, with let-bound names replaced by their values."""
    return substitute(a.axes[axis][0], a.lets)


def has_load(e) -> bool:
    """True when an expression reads memory (its value is only known at run time)."""
    return any(isinstance(n, N.Load) for n in walk(e))


def span_interval(start, extent, env: dict) -> Interval | None:
    """The elements [lo, hi] an axis (start, extent) can touch under `env`, or None."""
    s = bound(start, env)
    n = bound(extent, env)
    if s is None or n is None:
        return None
    return Interval(s.lo, s.hi + n.hi - 1)
