"""Loop and launch headers: `for ... in T.Pipelined/Parallel/serial/unroll/vectorized/grid/range(...)`
and `with T.Kernel(...) as (bx, by)`, each turned into a `For` or a `Launch` around the parsed body.
"""
from __future__ import annotations

import ast

from ..ir import nodes as N
from ..ir.arith import as_int
from ..language.builtin import BindError
from .expr_info import difference
from .kernel_errors import INT32_MAX, KernelError, bind_error, check_value
from .known import LAUNCH_BUILTINS
from .iket import is_iket, ranged as iket_ranged
from .signatures import bind_call
from .fragment_threads import host_layout_spec
from .values import BuiltinRef, LiveLayout, to_expr

_KINDS = {"Pipelined": "pipelined", "Parallel": "parallel", "serial": "serial", "unroll": "unroll",
          "vectorized": "vectorized", "grid": "grid", "range": "serial", "Persistent": "serial", "Serial": "serial",
          "parallel": "parallel", "Unroll": "unroll", "Vectorized": "vectorized"}


_CANON = {"parallel": "Parallel", "Serial": "serial", "Unroll": "unroll", "Vectorized": "vectorized"}


def _bind(p, name: str, short: str, call: ast.Call) -> dict:
    if short == "Persistent":
        return {}
    if short in _CANON:
        short = _CANON[short]
        name = "T." + short
    try:
        return bind_call(name, short, list(call.args), {k.arg: k.value for k in call.keywords if k.arg})
    except BindError as exc:
        raise bind_error(exc, call) from None


def _loop_names(node) -> list:
    t = node.target
    elts = t.elts if isinstance(t, (ast.Tuple, ast.List)) else [t]
    for e in elts:
        if not isinstance(e, ast.Name):
            raise KernelError("unsupported-syntax", f"loop variables must be plain names (got `{ast.unparse(e)}`)", e)
    return elts


def parse_for(p, node: ast.For) -> list:
    """A `for` statement: a tile-IR loop, or a trace-time unrolled loop over a Python tuple/list."""
    it = node.iter
    callee = p.ev.eval(it.func) if isinstance(it, ast.Call) else None
    if isinstance(callee, BuiltinRef) and callee.short in _KINDS or callee is range:
        short = "range" if callee is range else callee.short
        return [_loop(p, node, short, callee.name if isinstance(callee, BuiltinRef) else "range")]
    value = p.ev.eval(it)
    if isinstance(value, (tuple, list, range)) and len(value) <= 4096:
        return _unrolled(p, node, list(value))
    raise KernelError("unsupported-syntax", f"`for` over `{ast.unparse(it)}` is not a kernel loop; use T.serial, "
                      "T.Parallel, T.Pipelined, T.unroll, T.vectorized, T.grid or range", it)


def _unrolled(p, node, values) -> list:
    out = []
    for v in values:
        from .consteval import bind_target

        bind_target(node.target, v, p.env)
        out += p.loop_body(node.body, "unrolled")
    return out


def _loop(p, node: ast.For, short: str, name: str) -> N.For:
    call = node.iter
    b = _bind(p, name, short, call)
    kind = _KINDS[short]
    names = _loop_names(node)
    step = num_stages = order = stage = down = top = None
    annotations = ()
    if short in ("Parallel", "grid", "parallel"):
        extents = [check_value(_int_extent(p, e, f"T.{short}"), e, f"the T.{short} extent `{ast.unparse(e)}`",
                               minimum=0)
                   for e in b.get("extents", [])]
        starts = [N.Const(0)] * len(extents)
        if not extents:
            raise KernelError("bad-arguments", f"T.{short} needs at least one extent", call)
        annotations = _loop_layout(p, b.get("loop_layout"))
    elif short == "Persistent":
        domain = p.ev.eval(call.args[0]) if call.args else ()
        domain = domain if isinstance(domain, (tuple, list)) else (domain,)
        extents = [to_expr(p.ev.operand(d)) or N.Var("persistent", "int32", "symbolic") for d in domain]
        starts = [N.Const(0)] * len(extents)
    else:
        start, stop = _start_stop(p, b)
        if isinstance(b.get("step"), ast.AST):
            step = p.ev.scalar(b["step"])
        if short != "Pipelined" and as_int(step) is not None and as_int(step) < 0:
            down, step, top = -as_int(step), None, start  # range(start, stop, -s): the loop counts trips, the name
            starts, extents = [N.Const(0)], [_trips_down(start, stop, down)]  # reads start - trip * s
        else:
            starts, extents = [start], [difference(stop, start)]
        check_value(stop, b.get("stop") or b.get("start"), f"the T.{short} bound `{ast.unparse(call)}`",
                    minimum=-INT32_MAX)
        check_value(extents[0], call, f"the trip count of `{ast.unparse(call)}`", minimum=0)
        if short == "Pipelined":
            num_stages, order, stage = _pipeline(p, b)
    if len(names) != len(extents):
        raise KernelError("bad-arguments", f"T.{short} has {len(extents)} extent{'s' if len(extents) != 1 else ''} "
                          f"but the loop names {len(names)} variable{'s' if len(names) != 1 else ''}; "
                          "give one variable per extent", node.target)
    vars_ = tuple(N.Var(n.id, "int32", "loop", p.span(n)) for n in names)
    before = {v.name: p.env.values[v.name] for v in vars_ if v.name in p.env.values}
    bound = {v: v if down is None else N.BinOp("-", top, N.BinOp("*", v, N.Const(down)))
             for v in vars_}
    for v in vars_:
        p.env.values[v.name] = bound[v]
    body = p.loop_body(node.body, kind)
    for v in vars_:  # a loop variable does not exist after its loop (Python's leaked value has no TIR meaning)
        if p.env.values.get(v.name) is bound[v]:
            if v.name in before:
                p.env.values[v.name] = before[v.name]
            else:
                del p.env.values[v.name]
    return N.For(vars_, tuple(starts), tuple(extents), kind, p.seq(body, node), step, num_stages, order, stage,
                 annotations, p.span(node))


def _loop_layout(p, node) -> tuple:
    """`T.Parallel(..., loop_layout=frag)` with a T.Fragment built on the host: (("loop_layout", its LayoutSpec),),
    the threads that run each iteration (the owner checks read it); () for anything else."""
    if not isinstance(node, ast.Name):
        return ()
    live = p.ev.eval(node)
    return (("loop_layout", host_layout_spec(live, p.span(node))),) if isinstance(live, LiveLayout) else ()


def _trips_down(start, stop, down: int):
    """How many values range(start, stop, -down) takes: ceil((start - stop) / down), 0 when start <= stop."""
    gap = difference(start, stop)
    if isinstance(gap, N.Const) and isinstance(gap.value, int):
        return N.Const(max(0, -(-gap.value // down)))
    return N.BinOp("//", N.BinOp("+", gap, N.Const(down - 1)), N.Const(down))


def _int_extent(p, node, what: str, code: str = "bad-arguments"):
    """An extent that must be an integer expression (a float, e.g. from `/`, is reported)."""
    e = p.ev.scalar(node)
    is_float = isinstance(e, N.Const) and isinstance(e.value, float) or (
        isinstance(e, (N.Var, N.Cast)) and e.dtype.startswith(("float", "bfloat")))
    if is_float:
        raise KernelError(code, f"{what} extents must be integers, but `{ast.unparse(node)}` is a float; use `//` "
                          "or T.ceildiv", node)
    return e


def _start_stop(p, b):
    first = b.get("start")
    if not isinstance(b.get("stop"), ast.AST):
        return N.Const(0), p.ev.scalar(first)
    return p.ev.scalar(first), p.ev.scalar(b["stop"])


def _pipeline(p, b):
    from .handler_args import arg, const_int

    num_stages = const_int(p, b, "num_stages", "num_stages of T.Pipelined") if isinstance(b.get("num_stages"),
                                                                                         ast.AST) else 0
    check_value(num_stages, b.get("num_stages"), f"num_stages=`{ast.unparse(b['num_stages'])}`"
                if isinstance(b.get("num_stages"), ast.AST) else "num_stages", minimum=0)
    order, stage = arg(p, b, "order"), arg(p, b, "stage")
    return num_stages, _int_list(order, b.get("order")), _int_list(stage, b.get("stage"))


def _int_list(v, node):
    if v is None:
        return None
    if isinstance(v, (list, tuple)) and all(isinstance(x, int) for x in v):
        return tuple(v)
    raise KernelError("bad-arguments", "order= and stage= of T.Pipelined must be lists of integers", node)


def parse_with(p, node: ast.With) -> list:
    """`with T.Kernel(...) as ...:` opens the launch; other TileLang contexts just scope their body."""
    item = node.items[0]
    for it in node.items:
        f = it.context_expr.func if isinstance(it.context_expr, ast.Call) else None
        if f is not None and isinstance(p.ev.eval(f), BuiltinRef) and p.ev.eval(f).short in LAUNCH_BUILTINS:
            item = it
    call = item.context_expr
    callee = p.ev.eval(call.func) if isinstance(call, ast.Call) else None
    if isinstance(callee, BuiltinRef) and callee.short in LAUNCH_BUILTINS:
        p.launch_seen = True
        return [_launch(p, node, call, item.optional_vars, callee.name)]
    if is_iket(callee) and callee.short == "range":  # `with iket.range(name):` (frontend/iket.py)
        return iket_ranged(p, call, p.block(node.body))
    if isinstance(callee, BuiltinRef) and callee.short in ("ws", "WarpSpecialize"):
        return [_warp_role(p, node, call)]
    if isinstance(callee, BuiltinRef) and callee.short == "attr" and len(call.args) > 1 and \
            isinstance(call.args[1], ast.Constant) and call.args[1].value == "reduce_scope":
        from .allreduce import parse_reduce_scope

        return parse_reduce_scope(p, node, call)
    if isinstance(callee, BuiltinRef):
        if item.optional_vars is not None:
            from .consteval import bind_target

            bind_target(item.optional_vars, p.ev.eval(call), p.env)
        return p.block(node.body)
    raise KernelError("unsupported-syntax", f"`with {ast.unparse(call)}` is not a TileLang context; kernels open "
                      "`with T.Kernel(...)`", call)


def _warp_role(p, node, call) -> N.If:
    """`with T.ws(*groups):` runs its body on the listed warp groups: If(Call("ws", groups), body)."""
    groups = tuple(_int_extent(p, g, "T.ws") for g in call.args)
    if not groups or any(as_int(g) is None or as_int(g) < 0 for g in groups):
        raise KernelError("bad-arguments", "T.ws takes one or more compile-time warp-group indices (0, 1, ...)", call)
    body = p.block(node.body)
    return N.If(N.Call("ws", groups, "bool", p.span(call)), p.seq(body, node), None, p.span(node))


def _launch(p, node, call, target, name) -> N.Launch:
    b = _bind(p, "T.Kernel", "Kernel", call)
    grid_nodes = b.get("blocks", [])
    if len(grid_nodes) > 3:
        raise KernelError("invalid-kernel", f"T.Kernel takes at most 3 grid dimensions, got {len(grid_nodes)}", call)
    grid = tuple(check_value(_int_extent(p, g, "T.Kernel", "invalid-kernel"), g,
                             f"the T.Kernel grid extent `{ast.unparse(g)}`")
                 for g in grid_nodes) or (N.Const(1),)  # `T.Kernel(threads=128)`: one block, as in TileLang
    threads = launch_threads(p, b.get("threads"), call)
    cluster = _cluster_dims(p, b)
    names = [] if target is None else (target.elts if isinstance(target, (ast.Tuple, ast.List)) else [target])
    if isinstance(target, (ast.Tuple, ast.List)) and len(names) != len(grid):
        raise KernelError("invalid-kernel", f"T.Kernel has {len(grid)} grid dimension{'s' if len(grid) != 1 else ''} "
                          f"but `as` names {len(names)}; name one block index per dimension", target)
    p.launches += 1
    block_vars = []
    for n in names:
        if not isinstance(n, ast.Name):
            raise KernelError("invalid-kernel", "block indices must be plain names", n)
        v = N.Var(n.id, "int32", "block", p.span(n))
        p.env.values[n.id] = v
        block_vars.append(v)
    p.launch_depth += 1
    p.launch_threads = threads  # block-wide builtins (T.syncthreads_count) read the block's shape
    try:
        body = p.block(node.body)
        for it in node.items:  # `with T.Kernel(...) as bx, iket.range(name):`
            f = it.context_expr.func if isinstance(it.context_expr, ast.Call) else None
            if f is not None and is_iket(p.ev.eval(f)) and p.ev.eval(f).short == "range":
                body = iket_ranged(p, it.context_expr, body)
    finally:
        p.launch_depth -= 1
    return N.Launch(grid, threads, tuple(block_vars), p.seq(body, node), p.span(call), cluster)


def _cluster_dims(p, b) -> tuple[int, ...]:
    """cluster_dims= of T.ClusterKernel / T.Kernel: (x, y, z) blocks per cluster; () when absent or all 1."""
    node = b.get("cluster_dims")
    if not isinstance(node, ast.AST):
        return ()
    v = p.ev.eval(node)
    if v is None:
        return ()
    dims = list(v) if isinstance(v, (tuple, list)) else [v]
    dims = [as_int(d) if isinstance(d, N.Const) else d for d in dims]
    if not 1 <= len(dims) <= 3 or not all(isinstance(d, int) and not isinstance(d, bool) and d > 0 for d in dims):
        raise KernelError("invalid-kernel", f"cluster_dims= takes 1 to 3 positive compile-time integers (got "
                          f"`{ast.unparse(node)}`)", node)
    dims += [1] * (3 - len(dims))
    return tuple(dims) if dims != [1, 1, 1] else ()


def launch_threads(p, t, call) -> tuple:
    """The threads= of a launch (`t`: its node, or None for the default 128) as 1 to 3 extents."""
    if not isinstance(t, ast.AST):
        return (N.Const(128),)
    v = p.ev.eval(t)
    if v is None:
        return (N.Const(128),)
    dims = v if isinstance(v, (tuple, list)) else (v,)
    if not 1 <= len(dims) <= 3:
        raise KernelError("invalid-kernel", "threads= takes an int or 1 to 3 dimensions", t)
    out = []
    for d in dims:
        e = to_expr(p.ev.operand(d), p.span(t)) if d is not None else N.Var(ast.unparse(t), "int32", "symbolic")
        if e is None:
            raise KernelError("invalid-kernel", f"threads= must be integers (got `{ast.unparse(t)}`)", t)
        out.append(e)
    if any(as_int(e) is not None and as_int(e) <= 0 for e in out):
        raise KernelError("invalid-kernel", "threads= must be positive", t)
    return tuple(check_value(e, t, f"threads=`{ast.unparse(t)}`") for e in out)
