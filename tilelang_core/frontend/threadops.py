"""Thread-level builtins inside a kernel: thread indices, block barriers, mbarriers and register hints.

Each becomes a scalar `Call` (thread indices, typed int32) or a `Call` evaluated as a statement; mbarrier
arguments are passed as a `Load` of the `T.alloc_barrier` buffer (scope "shared.barrier"), whose
Allocate carries the arrive counts as `Call("barrier_counts", counts)`.
"""
from __future__ import annotations

import ast

from ..ir import nodes as N
from ..ir.arith import as_int
from .kernel_errors import KernelError
from .values import Unknown

WARP_SIZE = 32  # threads per warp when a thread-index builtin is not given one
_AXES = {"threadIdx.x": 0, "threadIdx.y": 1, "threadIdx.z": 2}
_BARRIER_OPS = {  # name -> (canonical name, parameter names after the barrier)
    "barrier_arrive": ("mbarrier_arrive", ()), "mbarrier_arrive": ("mbarrier_arrive", ("cta_id",)),
    "barrier_wait": ("mbarrier_wait_parity", ("parity",)), "mbarrier_wait_parity": ("mbarrier_wait_parity", ("parity",)),
    "mbarrier_expect_tx": ("mbarrier_expect_tx", ("tx",)),
    "mbarrier_arrive_expect_tx": ("mbarrier_arrive_expect_tx", ("tx",)),
    "cp_async_barrier_noinc": ("cp_async_barrier_noinc", ()),
}


def _bound(node: ast.Call, names: tuple) -> dict:
    """Argument nodes of a call by parameter name (positional first, then keywords)."""
    out = dict(zip(names, node.args))
    out.update({k.arg: k.value for k in node.keywords if k.arg in names})
    return out


def _int_arg(p, node, what: str) -> int:
    v = p.ev.eval(node)
    n = v if isinstance(v, int) and not isinstance(v, bool) else as_int(v) if isinstance(v, N.Const) else None
    if n is None:
        raise KernelError("bad-arguments", f"{what} must be a compile-time integer (got `{ast.unparse(node)}`)", node)
    return n


def _axis_index(p, node, name: str) -> N.Call:
    """T.<name>(dim=0): the index along axis 0, 1 or 2 as an int32 expression."""
    dim_node = _bound(node, ("dim",)).get("dim")
    dim = _int_arg(p, dim_node, f"the `dim` of T.{name}") if dim_node is not None else 0
    if dim not in (0, 1, 2):
        raise KernelError("bad-arguments", f"T.{name} takes dim 0, 1 or 2 (got {dim})", dim_node)
    return N.Call(name, (N.Const(dim),), "int32", p.span(node))


def h_get_thread_binding(p, b, node, short):
    """T.get_thread_binding(dim=0): threadIdx.x/y/z as an int32 expression."""
    return _axis_index(p, node, "get_thread_binding")


def h_thread_binding(p, b, node, short):
    """T.thread_binding(start, stop, thread="threadIdx.x") used as a value: that thread index (plus start)."""
    args = _bound(node, ("start", "stop", "thread", "annotations"))
    if "stop" in args and isinstance(p.ev.eval(args["stop"]), str):  # T.thread_binding(extent, "threadIdx.x")
        args["thread"] = args.pop("stop")
    thread = p.ev.eval(args["thread"]) if "thread" in args else None
    if thread not in _AXES:
        raise KernelError("bad-arguments", "T.thread_binding needs thread=\"threadIdx.x\" (or .y/.z); block indices "
                          "come from `with T.Kernel(...) as (bx, by)`", node)
    index = N.Call("get_thread_binding", (N.Const(_AXES[thread]),), "int32", p.span(node))
    if "stop" in args and "start" in args:
        start = p.ev.scalar(args["start"])
        if as_int(start) != 0:
            return N.BinOp("+", start, index, p.span(node))
    return index


def h_thread_index(p, b, node, short):
    """T.get_lane_idx / get_warp_idx / get_warp_group_idx (optional warp_size, warps_per_group)."""
    args = _bound(node, ("warp_size", "warps_per_group"))
    given = {k: v for k, v in args.items() if p.ev.eval(v) is not None}  # None (literal or a closure's) = default
    sizes = []
    for k in ("warp_size", "warps_per_group"):
        if k in given:
            n = _int_arg(p, given[k], f"`{k}`")
            if n <= 0:
                raise KernelError("bad-arguments", f"`{k}` of T.{short} must be positive (got {n})", given[k])
            sizes.append(N.Const(n))
        elif k == "warp_size" and "warps_per_group" in given:
            sizes.append(N.Const(WARP_SIZE))
    return N.Call(short.removesuffix("_sync"), tuple(sizes), "int32", p.span(node))


def h_shuffle_elect(p, b, node, short):
    """T.shuffle_elect(thread_extent): true on one thread of each group of `thread_extent` consecutive threads
    (its first), or on the block's first thread alone when thread_extent is 0, as a boolean expression over the
    flat thread index (`get_warp_idx(1)` is that index)."""
    args = _bound(node, ("thread_extent",))
    if "thread_extent" not in args:
        raise KernelError("bad-arguments", "T.shuffle_elect needs thread_extent (threads per elected group; 0 for "
                          "the whole block)", node)
    extent = _int_arg(p, args["thread_extent"], "the `thread_extent` of T.shuffle_elect")
    if extent < 0:
        raise KernelError("bad-arguments", f"the `thread_extent` of T.shuffle_elect must be 0 (the whole block) or "
                          f"positive (got {extent})", args["thread_extent"])
    span = p.span(node)
    group = N.Call("get_lane_idx", (N.Const(extent),), "int32", span) if extent else \
        N.Call("get_warp_idx", (N.Const(1),), "int32", span)
    return N.Compare("==", group, N.Const(0), span)


def h_get_block_binding(p, b, node, short):
    """T.get_block_binding(dim=0): blockIdx.x/y/z as an int32 expression."""
    return _axis_index(p, node, "get_block_binding")


def h_shuffle(p, b, node, short):
    """T.shfl_xor/up/down(value, delta, width=32, mask=0xFFFFFFFF) and T.warp_reduce_<op>(value)."""
    from .expr_info import expr_dtype

    names = ("value",) if short.startswith("warp_reduce") else ("value", "delta", "width", "mask")
    args = _bound(node, names if short != "shfl_sync" else ("value", "src_lane", "width", "mask"))
    if "src_lane" in args:  # T.shfl_sync(value, src_lane): the lane read, where the others take an offset
        args["delta"] = args.pop("src_lane")
    if "value" not in args or len(names) > 1 and "delta" not in args:
        raise KernelError("bad-arguments", f"T.{short} needs {' and '.join(names[:2] if len(names) > 1 else names)}",
                          node)
    value = p.ev.scalar(args["value"])
    extra = []
    if len(names) > 1:
        extra = [p.ev.scalar(args["delta"]), N.Const(_int_arg(p, args["width"], "width") if "width" in args else 32)]
        mask = _int_arg(p, args["mask"], "mask") if "mask" in args else 0xFFFFFFFF
        extra.append(N.Const(mask & 0xFFFFFFFF, "uint32"))
    return N.Call(short, (value, *extra), expr_dtype(value), p.span(node))


def h_sync_threads(p, b, node, short):
    """T.sync_threads(barrier_id=None, arrive_count=None): __syncthreads() or a named barrier."""
    args = _bound(node, ("barrier_id", "arrive_count"))
    values = tuple(p.ev.scalar(args[k]) for k in ("barrier_id", "arrive_count")
                   if k in args and not (isinstance(args[k], ast.Constant) and args[k].value is None))
    if len(values) == 1:
        raise KernelError("bad-arguments", "T.sync_threads takes both barrier_id and arrive_count, or neither", node)
    return N.Call("sync_threads", values, "int32", p.span(node))


def h_alloc_barrier(p, b, node, short):
    """T.alloc_barrier / T.alloc_cluster_barrier(arrive_count): one mbarrier per count (an int or a list of ints) in
    shared memory (a cluster barrier is the same mbarrier; arrivals on another CTA's, `cta_id`, are refused when
    lowered)."""
    args = _bound(node, ("arrive_count",))
    if "arrive_count" not in args:
        raise KernelError("bad-arguments", f"T.{short} needs arrive_count (an int or a list of ints)", node)
    v = p.ev.eval(args["arrive_count"])
    span = p.span(node)
    if isinstance(v, Unknown):  # `[32] * num_stages` with num_stages unknown statically: a symbolic count
        name = p.target_name or short
        buf = N.Buffer(name, (N.Var(f"{name}_count", "int32", "symbolic", span),), "uint64", "shared.barrier", span)
        p.emit(N.Allocate(buf, None, span))
        return buf
    counts = v if isinstance(v, (list, tuple)) else [v]
    exprs = []
    for c in counts:
        e = p.ev.scalar_value(c, args["arrive_count"])
        if as_int(e) is None or as_int(e) <= 0:
            raise KernelError("bad-arguments", f"arrive_count of T.{short} must be positive compile-time "
                              f"integers (got `{ast.unparse(args['arrive_count'])}`)", args["arrive_count"])
        exprs.append(e)
    span = p.span(node)
    buf = N.Buffer(p.target_name or short, (N.Const(len(exprs)),), "uint64", "shared.barrier", span)
    p.emit(N.Allocate(buf, N.Call("barrier_counts", tuple(exprs), "int32", span), span))
    return buf


def h_barrier_op(p, b, node, short):
    """T.barrier_arrive/barrier_wait/mbarrier_*(mbarrier, ...): a call on one mbarrier of a T.alloc_barrier."""
    name, rest = _BARRIER_OPS[short]
    args = _bound(node, ("mbarrier",) + rest)
    if "mbarrier" not in args:
        raise KernelError("bad-arguments", f"T.{short} needs the mbarrier (from T.alloc_barrier)", node)
    bar = p.ev.eval(args["mbarrier"])
    if isinstance(bar, N.Buffer):
        bar = N.Load(bar, (N.Const(0),), p.span(args["mbarrier"]))
    if not (isinstance(bar, N.Load) and bar.buffer.scope == "shared.barrier"):
        raise KernelError("bad-arguments", f"the first argument of T.{short} must be a barrier from T.alloc_barrier "
                          f"(got `{ast.unparse(args['mbarrier'])}`)", args["mbarrier"])
    values = [bar]
    for k in rest:
        given = args.get(k)
        if given is None or isinstance(given, ast.Constant) and given.value is None:
            if k != "cta_id":
                raise KernelError("bad-arguments", f"T.{short} needs `{k}`", node)
            continue
        values.append(p.ev.scalar(given))
    return N.Call(name, tuple(values), "int32", p.span(node))


THREAD_HANDLERS = {
    "get_thread_binding": h_get_thread_binding, "thread_binding": h_thread_binding,
    "get_lane_idx": h_thread_index, "get_warp_idx": h_thread_index, "get_warp_idx_sync": h_thread_index,
    "get_warp_group_idx": h_thread_index, "shuffle_elect": h_shuffle_elect, "sync_threads": h_sync_threads, "alloc_barrier": h_alloc_barrier,
    "alloc_cluster_barrier": h_alloc_barrier,
    "get_block_binding": h_get_block_binding,
    **{f"shfl_{d}": h_shuffle for d in ("xor", "up", "down")},
    **{f"warp_reduce_{op}": h_shuffle for op in ("sum", "max", "min", "bitand", "bitor")}, "shfl_sync": h_shuffle,
    **{name: h_barrier_op for name in _BARRIER_OPS},
}
