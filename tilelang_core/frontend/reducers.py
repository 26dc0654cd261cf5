"""The reducer epoch of `T.alloc_reducer`: `T.reducer_init` / `T.reducer_update` / `T.finalize_reducer(acc, dst)`
(an epoch) and the in-place form (`T.clear(acc)`, `acc[i] += v`, `T.finalize_reducer(acc)`).

The handlers write an epoch out as ordinary statements: the init fills every partial copy with the op's identity
(or, for max/min/bitand/bitor, with the starting value), the update is a read-modify-write of the element inside a
T.Parallel loop, the finalize is the in-place combine `Call("finalize_reducer", (head, Const(op)))` the backends
already lower, then a copy into `dst` (combined with a sum/bitxor starting value kept in a `local.var` taken at the
init). `check_epochs` runs on the finished kernel body: the order and scope of each epoch, and no other access
to a reducer that has one.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field

from ..ir import nodes as N
from ..ir.arith import as_int, shape_ints
from ..ir.visitor import children
from .expr_info import expr_dtype
from .kernel_errors import KernelError

REDUCER_OPS = ("sum", "max", "min", "bitand", "bitor", "bitxor")
_IDEMPOTENT = ("max", "min", "bitand", "bitor")
_BITWISE = {"bitand": "&", "bitor": "|", "bitxor": "^"}


@dataclass
class Reducer:
    """What the parser knows of one `T.alloc_reducer` buffer."""

    op: str
    seed: N.Buffer | None = None  # the local.var holding a sum/bitxor starting value of the open epoch
    marked: dict = field(default_factory=dict)  # id(stmt) -> (event, span, stmt) of statements an epoch wrote


def reducers(p) -> dict:
    """The parser's reducer buffers (one table per kernel parse, macros included)."""
    if not hasattr(p, "reducer_table"):
        p.reducer_table = {}
    return p.reducer_table


def _is_int(dtype: str) -> bool:
    return dtype.startswith(("int", "uint"))


def h_alloc_reducer(p, b, node, short):
    """T.alloc_reducer(shape, dtype, op="sum", replication=None): a fragment whose per-thread copies combine."""
    from .alloc_calls import h_alloc_other

    op_node = node.args[2] if len(node.args) > 2 else next((k.value for k in node.keywords if k.arg == "op"), None)
    op = p.ev.eval(op_node) if op_node is not None else "sum"
    if op not in REDUCER_OPS:
        raise KernelError("bad-arguments", f"T.alloc_reducer op must be one of {', '.join(map(repr, REDUCER_OPS))} "
                          f"(got `{ast.unparse(op_node)}`)", op_node)
    buf = h_alloc_other(p, b, node, short)
    if op in _BITWISE and not _is_int(buf.dtype):
        raise KernelError("reducer-dtype", f"T.alloc_reducer op={op!r} combines bits and needs an integer dtype (got "
                          f"{buf.dtype}); allocate the reducer as T.int32 or T.uint32, or use op='sum', 'max' or "
                          "'min'", op_node)
    reducers(p)[buf] = Reducer(op)
    return buf


def _reducer_of(p, value, node, what: str) -> tuple[N.Buffer, Reducer]:
    buf = value.buffer if isinstance(value, N.Load) else value
    if not isinstance(buf, N.Buffer) or buf not in reducers(p):
        raise KernelError("bad-arguments", f"{what} takes a buffer made by T.alloc_reducer (got `{ast.unparse(node)}`)",
                          node)
    return buf, reducers(p)[buf]


def _mark(p, red: Reducer, event: str, stmt, span) -> None:
    red.marked[id(stmt)] = (event, span, stmt)
    p.emit(stmt)


def identity(op: str, dtype: str, span=None) -> N.Expr:
    """The value that leaves any other unchanged under `op`."""
    if op in ("sum", "bitor", "bitxor"):
        return N.Const(0 if _is_int(dtype) or dtype == "bool" else 0.0, dtype, span)
    if op == "bitand":
        return N.Const(-1, dtype, span) if dtype.startswith("int") else N.Call("max_value", (), dtype, span)
    if _is_int(dtype):
        return N.Call("min_value" if op == "max" else "max_value", (), dtype, span)
    if dtype in _INF_BITS:  # 16-bit infinities as their bits (TVM prints no 16-bit infinity constant for CUDA)
        bits = _INF_BITS[dtype][op == "max"]
        return N.Call("reinterpret", (N.Const(bits, "uint16", span),), dtype, span)
    inf = N.Call("infinity", (), dtype, span)
    return N.UnaryOp("-", inf, span) if op == "max" else inf


_INF_BITS = {"float16": (0x7C00, 0xFC00), "bfloat16": (0x7F80, 0xFF80)}  # (+inf, -inf)


def combine(op: str, a: N.Expr, b: N.Expr, dtype: str, span=None) -> N.Expr:
    """`a (op) b` in `dtype`."""
    if op == "sum":
        return N.BinOp("+", a, b, span)
    if op in _BITWISE:
        return N.BinOp(_BITWISE[op], a, b, span)
    return N.Call(op, (a, b), dtype, span)


def _full(buf: N.Buffer, span) -> N.Region:
    return N.Region(buf, tuple(N.Axis(N.Const(0), d, True) for d in buf.shape), "full", span)


def h_reducer_init(p, b, node, short):
    """T.reducer_init(reducer, value=None): open an epoch; every partial starts from the op's identity."""
    if not node.args:
        raise KernelError("bad-arguments", "T.reducer_init takes the reducer buffer (and an optional starting value)",
                          node)
    buf, red = _reducer_of(p, p.ev.eval(node.args[0]), node.args[0], "T.reducer_init")
    value_node = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "value"),
                                                              None)
    span = p.span(node)
    seed = None
    if value_node is not None:
        raw = p.ev.eval(value_node)
        seed = p.ev.scalar_value(raw, value_node)
        written = None if isinstance(raw, (int, float)) else expr_dtype(seed)
        if written is not None and written != buf.dtype:
            raise KernelError("reducer-epoch", f"the starting value `{ast.unparse(value_node)}` is {written}, which "
                              f"does not match reducer '{buf.name}' ({buf.dtype}); cast it with "
                              f"T.cast(..., \"{buf.dtype}\")", value_node)
        if isinstance(seed, N.Const):
            seed = N.Const(int(seed.value) if _is_int(buf.dtype) else float(seed.value), buf.dtype, seed.span)
    red.seed = None
    if seed is not None and red.op in _IDEMPOTENT:
        _mark(p, red, "init", N.Fill(_full(buf, span), seed, False, span), span)
        return None
    _mark(p, red, "init", N.Fill(_full(buf, span), identity(red.op, buf.dtype, span), True, span), span)
    if seed is not None:  # combined once, at the finalize: keep the value the init saw
        red.seed = N.Buffer(f"{buf.name}_seed", (N.Const(1),), buf.dtype, "local.var", span)
        _mark(p, red, "seed", N.Allocate(red.seed, seed, span), span)
    return None


def h_reducer_update(p, b, node, short):
    """T.reducer_update(reducer[i, ...], value): fold one contribution into the element (inside T.Parallel)."""
    if len(node.args) != 2:
        raise KernelError("bad-arguments", "T.reducer_update takes (reducer[indices], value)", node)
    target = p.ev.eval(node.args[0])
    buf, red = _reducer_of(p, target, node.args[0], "T.reducer_update")
    if not isinstance(target, N.Load):
        raise KernelError("bad-arguments", f"T.reducer_update takes one element of '{buf.name}' "
                          f"(`{buf.name}[i]`), not the whole buffer", node.args[0])
    value = p.ev.scalar(node.args[1])
    if expr_dtype(value) not in (None, buf.dtype):
        value = N.Cast(buf.dtype, value, p.span(node.args[1]))
    span = p.span(node)
    new = combine(red.op, N.Load(buf, target.indices, target.span), value, buf.dtype, span)
    parallel = "parallel" in p.loops
    _mark(p, red, "update" if parallel else "update-outside", N.Store(buf, target.indices, new, span), span)
    return None


def h_finalize_reducer(p, b, node, short):
    """T.finalize_reducer(reducer, dst=None, batch=1): combine the partial copies (in place, or into `dst`)."""
    from .handler_args import arg, const_int
    from .regions import region_of

    if not node.args:
        raise KernelError("bad-arguments", "T.finalize_reducer needs the reducer buffer", node)
    buf, red = _reducer_of(p, p.ev.eval(node.args[0]), node.args[0], "T.finalize_reducer")
    span = p.span(node)
    head = N.Load(buf, tuple(N.Const(0) for _ in buf.shape), p.span(node.args[0]))
    _mark(p, red, "finalize", N.Evaluate(N.Call("finalize_reducer", (head, N.Const(REDUCER_OPS.index(red.op))),
                                                "int32", span), span), span)
    _check_batch(buf, const_int(p, b, "batch", "the batch of T.finalize_reducer"), b.get("batch"))
    dst_node = b.get("dst")
    if dst_node is None or arg(p, b, "dst") is None:
        return None
    dst = region_of(p, dst_node)
    if red.seed is None:
        _mark(p, red, "publish", N.Copy(_full(buf, span), dst, span), span)
        return None
    loop_vars = tuple(N.Var(f"r{k}", "int32", "loop", span) for k in range(len(buf.shape)))
    seeded = combine(red.op, N.Load(buf, loop_vars, span), N.Load(red.seed, (N.Const(0),), span), buf.dtype, span)
    if len(dst.axes) != len(loop_vars):
        raise KernelError("bad-arguments", f"the dst of T.finalize_reducer must have the rank of '{buf.name}' "
                          f"({len(loop_vars)})", dst_node)
    at = tuple(v if as_int(a.start) == 0 else N.BinOp("+", a.start, v) for a, v in zip(dst.axes, loop_vars))
    loop = N.For(loop_vars, tuple(N.Const(0) for _ in loop_vars), tuple(buf.shape), "parallel",
                 N.Store(dst.buffer, at, seeded, span), span=span)
    _mark(p, red, "publish", loop, span)
    return None


def _check_batch(buf: N.Buffer, batch: int | None, node) -> None:
    if batch is None:
        return
    if batch < 1:
        raise KernelError("invalid-value", f"the batch of T.finalize_reducer is {batch}; batch must be >= 1", node)
    dims = shape_ints(buf.shape)
    if dims is None:
        return
    total = 1
    for d in dims:
        total *= d
    if batch > total:
        raise KernelError("invalid-value", f"the batch {batch} of T.finalize_reducer exceeds total output elements "
                          f"of '{buf.name}' ({total}); pass a batch that divides {total}", node)
    if total % batch:
        raise KernelError("invalid-value", f"the batch {batch} of T.finalize_reducer must evenly divide the {total} "
                          f"output elements of '{buf.name}'", node)


REDUCER_HANDLERS = {"alloc_reducer": h_alloc_reducer, "reducer_init": h_reducer_init,
                    "reducer_update": h_reducer_update, "finalize_reducer": h_finalize_reducer}


# --- the epoch rules, over the finished body ------------------------------------------------------------------

def check_epochs(p, body) -> None:
    """Report epochs out of order or scope, and other accesses to reducers that have an epoch (reducer-epoch)."""
    table = {buf: red for buf, red in reducers(p).items()
             if any(ev != "finalize" for ev, _, _ in red.marked.values())}
    if not table:
        return
    marked = {k: (buf, v) for buf, red in table.items() for k, v in red.marked.items()}
    state: dict = {buf: None for buf in table}  # open epoch: the loop path of its init, else None
    store = None  # the span of the last illegal store reported: its own reads of the reducer are not reported again
    for node, path in _walk(body, marked):
        if id(node) in marked:
            buf, (event, span, _) = marked[id(node)]
            _event(p, buf, event, span, path, state)
        elif not (isinstance(node, N.Load) and store and node.span and store.contains(node.span.line, node.span.col)):
            store = _access(p, node, table) or store
    for buf, opened in state.items():
        if opened is not None:
            p.ctx.emit("reducer-epoch", f"reducer '{buf.name}' is never finalized after its T.reducer_init; call "
                       f"T.finalize_reducer({buf.name}, dst) in the same scope", opened[1])


def _walk(node, marked, path=()):
    """(statement or access, ids of the enclosing loops) in program order; a marked statement's insides and the
    destination region of a fill or copy (reported with its statement) are not entered."""
    if id(node) in marked:
        yield node, path
        return
    if isinstance(node, (N.Load, N.Store, N.Fill, N.Copy, N.Region)):
        yield node, path
    if isinstance(node, (N.For, N.While)):
        path = path + (id(node),)
    skip = node.dst if isinstance(node, (N.Fill, N.Copy)) else None
    for c in children(node):
        if c is not skip:
            yield from _walk(c, marked, path)


def _event(p, buf, event, span, path, state) -> None:
    loops, opened = path, state[buf]
    name = buf.name
    if event == "init":
        if opened is not None:
            p.ctx.emit("reducer-epoch", f"double T.reducer_init of reducer '{name}': its epoch is still open; call "
                       f"T.finalize_reducer({name}, dst) before opening another", span)
        state[buf] = (loops, span)
    elif event in ("update", "update-outside"):
        if opened is None:
            p.ctx.emit("reducer-epoch", f"T.reducer_update of reducer '{name}' before T.reducer_init; open the epoch "
                       f"with T.reducer_init({name}) first", span)
        elif event == "update-outside":
            p.ctx.emit("reducer-epoch", f"T.reducer_update of reducer '{name}' outside any T.Parallel loop: every "
                       "thread would contribute it; update inside `for i in T.Parallel(...)`", span)
        elif loops[:len(opened[0])] != opened[0]:
            p.ctx.emit("reducer-epoch", f"T.reducer_update of reducer '{name}' is not in the scope of its "
                       "T.reducer_init; update inside the loop that opens the epoch", span)
    elif event == "finalize":
        if opened is None:
            return  # the in-place form (T.clear / T.fill, then stores) needs no T.reducer_init
        if loops != opened[0]:
            p.ctx.emit("reducer-epoch", f"T.finalize_reducer of reducer '{name}' is not in the scope of its "
                       "T.reducer_init (a finalize must run once per init: in the same loop, or an `if` inside it)",
                       span)
        state[buf] = None


def _access(p, node, table):
    """A user-written access to a reducer with an epoch: only T.reducer_update writes it, only the finalize reads.
    Returns the span of a store it reports."""
    if isinstance(node, (N.Fill, N.Copy)):
        buf, what = node.dst.buffer, " (T.clear / T.fill)" if isinstance(node, N.Fill) else " (T.copy into it)"
    else:
        buf, what = node.buffer, ""
    if buf not in table:
        return None
    span = node.span or buf.span
    if isinstance(node, (N.Store, N.Fill, N.Copy)):
        p.ctx.emit("reducer-epoch", f"illegal store to reducer '{buf.name}'{what}: its partials start at "
                   f"T.reducer_init({buf.name}) and change only through T.reducer_update({buf.name}[...], value)",
                   span)
        return span
    else:
        p.ctx.emit("reducer-epoch", f"illegal read of reducer '{buf.name}': its partials are combined only by "
                   f"T.finalize_reducer({buf.name}, dst); read dst instead", span)
    return None
