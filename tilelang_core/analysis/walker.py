"""One scoped walk over a kernel's IR: tracks loop ranges, let bindings, enclosing T.Parallel/T.Pipelined
loops and the launch, and hands every statement and buffer access to the registered check rules."""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Callable

from ..diagnostics import internal_message
from ..ir import nodes as N
from .bounds import bound, loop_interval, mentions, refine
from .fastwalk import kids as children


@dataclass
class Ctx:
    """Where the walk is: value ranges of variables and the loops and launch around the current node."""

    func: N.PrimFunc
    sink: object
    env: dict = field(default_factory=dict)  # Var -> Interval (only variables that could be bounded)
    parallel: tuple = ()  # enclosing T.Parallel For nodes, outermost first
    pipelined: tuple = ()  # enclosing T.Pipelined For nodes
    launch: N.Launch | None = None
    fused: N.For | None = None  # a T.Parallel that is the whole body of an enclosing T.Parallel
    lets: dict = field(default_factory=dict)  # let Var -> its value (to read branch conditions through)

    def emit(self, code: str, message: str, span, **kw):
        """Report a diagnostic for this kernel instance (skipped when the node has no span)."""
        if span is None:
            return None
        return self.sink.emit(code, message, span, kernel=self.func.name, instance=self.func.instance or None, **kw)

    def child(self, **changes) -> "Ctx":
        """A copy for a nested scope (the env dict is copied, so lets do not leak out)."""
        changes.setdefault("env", dict(self.env))
        changes.setdefault("lets", dict(self.lets))
        return replace(self, **changes)

    @property
    def parallel_vars(self) -> set:
        """The loop variables of every enclosing T.Parallel."""
        return {v for f in self.parallel for v in f.vars}


# rule registries: node type -> functions(node, ctx); access rules get (buffer, indices, span, ctx)
STMT_RULES: dict[type, list[Callable]] = {}
ACCESS_RULES: list[Callable] = []
KERNEL_RULES: list[Callable] = []


def rule(*types):
    """Register a check function for statements of the given IR types."""
    def deco(fn):
        for t in types:
            STMT_RULES.setdefault(t, []).append(fn)
        return fn
    return deco


def access_rule(fn):
    """Register a check function for every element access (Load/Store) of a buffer."""
    ACCESS_RULES.append(fn)
    return fn


def kernel_rule(fn):
    """Register a whole-kernel check fn(func, ctx); it runs after the walk, only when the instance has no errors
    (the data-flow rules would otherwise report the consequences of an error already reported)."""
    KERNEL_RULES.append(fn)
    return fn


def run(func: N.PrimFunc, sink) -> None:
    """Walk one kernel instance and run every registered rule."""
    ctx = Ctx(func, sink)
    before = sum(1 for d in sink.items if d.is_error)
    visit(func.body, ctx)
    if func.errors or sum(1 for d in sink.items if d.is_error) > before:
        return
    for fn in KERNEL_RULES:
        guarded(fn, func, ctx, func, ctx)


def visit(s, ctx: Ctx) -> None:
    """Visit one statement under `ctx` (rules first, then children in their scopes)."""
    if s is None:
        return
    for fn in STMT_RULES.get(type(s), ()):
        guarded(fn, s, ctx, s, ctx)
    handler = _HANDLERS.get(type(s), _visit_generic)
    handler(s, ctx)


def _visit_seq(s: N.SeqStmt, ctx: Ctx) -> None:
    for st in s.stmts:
        visit(st, ctx)


def _visit_launch(s: N.Launch, ctx: Ctx) -> None:
    inner = ctx.child(launch=s)
    for v, g in zip(s.block_vars, s.grid):
        iv = loop_interval(N.Const(0), g, inner.env)
        if iv is not None:
            inner.env[v] = iv
    visit(s.body, inner)


def _visit_for(s: N.For, ctx: Ctx) -> None:
    for e in (*s.starts, *s.extents):
        visit_expr(e, ctx)
    kw = {}
    if s.kind == "parallel":
        kw["parallel"] = ctx.parallel + (s,)
        kw["fused"] = perfect_child(s)
    if s.kind == "pipelined":
        kw["pipelined"] = ctx.pipelined + (s,)
    inner = ctx.child(**kw)
    step = s.step if len(s.vars) == 1 else None
    for v, st, ext in zip(s.vars, s.starts, s.extents):
        iv = loop_interval(st, ext, ctx.env, step)
        if iv is not None:
            inner.env[v] = iv
    visit(s.body, inner)


def perfect_child(f: N.For) -> N.For | None:
    """The T.Parallel loop that is the whole body of T.Parallel `f` (TileLang fuses the two), else None."""
    body = f.body
    while isinstance(body, N.SeqStmt) and len(body.stmts) == 1:
        body = body.stmts[0]
    return body if isinstance(body, N.For) and body.kind == "parallel" else None


def _visit_if(s: N.If, ctx: Ctx) -> None:
    visit_expr(s.cond, ctx)
    visit(s.then_body, ctx.child(env=_branch_env(s.cond, ctx, False)))
    if s.else_body is not None:
        visit(s.else_body, ctx.child(env=_branch_env(s.cond, ctx, True)))


def _branch_env(cond, ctx: Ctx, negate: bool) -> dict:
    """Env narrowed by a branch condition (read through let bindings too); the variables of a condition
    that cannot be read become unbounded, so nothing it guards is reported."""
    env = ctx.env
    new = refine(cond, env, negate)
    base = new if new is not None else {v: iv for v, iv in env.items() if not mentions(cond, {v})}
    used = [v for v in ctx.lets if mentions(cond, {v})]
    if not used:
        return base
    sub = substitute(cond, ctx.lets)
    again = refine(sub, base, negate)
    if again is not None:
        return again
    return {v: iv for v, iv in base.items() if v in used or not mentions(sub, {v})}


def substitute(e, lets: dict, depth: int = 0):
    """`e` with let-bound variables replaced by their values (a few levels deep)."""
    if depth > 8:
        return e
    if isinstance(e, N.Var):
        return substitute(lets[e], lets, depth + 1) if e in lets else e
    if isinstance(e, N.BinOp):
        return N.BinOp(e.op, substitute(e.lhs, lets, depth), substitute(e.rhs, lets, depth), e.span)
    if isinstance(e, N.Compare):
        return N.Compare(e.op, substitute(e.lhs, lets, depth), substitute(e.rhs, lets, depth), e.span)
    if isinstance(e, N.BoolOp):
        return N.BoolOp(e.op, tuple(substitute(v, lets, depth) for v in e.values), e.span)
    if isinstance(e, N.UnaryOp):
        return N.UnaryOp(e.op, substitute(e.operand, lets, depth), e.span)
    return e


def _visit_while(s: N.While, ctx: Ctx) -> None:
    """A runtime loop of unknown trip count: only immutable names are narrowed by its condition."""
    visit_expr(s.cond, ctx)
    visit(s.body, ctx.child(env=_branch_env(s.cond, ctx, False)))


def _visit_let(s: N.LetStmt, ctx: Ctx) -> None:
    visit_expr(s.value, ctx)
    ctx.lets[s.var] = s.value
    iv = bound(s.value, ctx.env)
    if iv is not None:
        ctx.env[s.var] = iv
    else:
        ctx.env.pop(s.var, None)


def _visit_store(s: N.Store, ctx: Ctx) -> None:
    for i in s.indices:
        visit_expr(i, ctx)
    visit_expr(s.value, ctx)
    _access(s.buffer, s.indices, s.span, ctx)


def _visit_generic(s, ctx: Ctx) -> None:
    for c in children(s):
        if isinstance(c, (N.SeqStmt, N.For, N.While, N.If, N.LetStmt, N.Store, N.Launch, N.Allocate, N.Evaluate,
                          *N.TILE_OPS, N.AnnotateLayout, N.UseSwizzle)):
            visit(c, ctx)
        elif isinstance(c, N.Region):
            for ax in c.axes:
                visit_expr(ax.start, ctx)
                visit_expr(ax.extent, ctx)
        else:
            visit_expr(c, ctx)


def _access(buffer, indices, span, ctx: Ctx) -> None:
    for fn in ACCESS_RULES:
        guarded(fn, span, ctx, buffer, indices, span, ctx)


def guarded(fn, where, ctx: Ctx, *args) -> None:
    """Run one rule; an internal failure becomes an internal-error at the node instead of a crash."""
    try:
        fn(*args)
    except RecursionError:
        raise
    except Exception as exc:  # noqa: BLE001 - bad input must never crash the checker
        span = getattr(where, "span", where)
        ctx.emit("internal-error", internal_message(f"in the {fn.__name__} check", exc),
                 span if span is not None else ctx.func.span)


def visit_expr(e, ctx: Ctx) -> None:
    """Visit an expression: run access rules on each Load, narrowing ranges inside T.if_then_else."""
    if isinstance(e, N.Load):
        for i in e.indices:
            visit_expr(i, ctx)
        _access(e.buffer, e.indices, e.span, ctx)
        return
    if isinstance(e, N.Select):
        visit_expr(e.cond, ctx)
        visit_expr(e.true_value, ctx.child(env=_branch_env(e.cond, ctx, False)))
        visit_expr(e.false_value, ctx.child(env=_branch_env(e.cond, ctx, True)))
        return
    if isinstance(e, (N.Var, N.Const)) or e is None:
        return
    for c in children(e):
        visit_expr(c, ctx)


_HANDLERS = {N.SeqStmt: _visit_seq, N.Launch: _visit_launch, N.For: _visit_for, N.If: _visit_if,
             N.While: _visit_while, N.LetStmt: _visit_let, N.Store: _visit_store}


