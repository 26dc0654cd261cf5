"""Thread all-reduces on the CPU backend's thread emulation (cpu/simt.py): TVM's `T.tvm_thread_allreduce` (over
one threadIdx axis) and `T.warp_reduce_sum/max/min/bitand/bitor` (over the lanes of a warp). Like a warp shuffle, a
statement reading one runs in phases of its own (the value, then the store), and the value for thread t is the operand
evaluated as each thread of t's group, combined in thread order."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int
from .expr import LoweringError, const

REDUCE_CALLS = frozenset({"thread_allreduce", "warp_reduce_sum", "warp_reduce_max", "warp_reduce_min",
                          "warp_reduce_bitand", "warp_reduce_bitor"})
_OPS = ("sum", "max", "min")  # the first of frontend/reducers.REDUCER_OPS


def _static(tirx, e, what: str, span) -> int:
    if not isinstance(e, tirx.IntImm):
        raise LoweringError(f"{what} must be a compile-time thread count on the CPU backend", span)
    return int(e.value)


def allreduce_value(simt, e: N.Call):
    """The value a thread all-reduce gives the current thread: its operand combined over the thread's group."""
    ctx, tirx, t = simt.ctx, simt.tirx, simt.ctx.tid
    if t is None:
        raise LoweringError(f"T.{e.name} is read outside the threads' phases", e.span)
    total = _static(tirx, simt.total, f"the block of T.{e.name}", e.span)
    if e.name == "thread_allreduce":
        op, axis = _OPS[as_int(e.args[1])], as_int(e.args[2])
        if axis is None or axis >= len(simt.extents):
            raise LoweringError("T.tvm_thread_allreduce reduces over a threadIdx axis the launch does not have",
                                e.span)
        stride = 1
        for x in simt.extents[:axis]:
            stride *= _static(tirx, x, "the thread extents", e.span)
        count = _static(tirx, simt.extents[axis], "the reduced thread extent", e.span)
    else:
        op, stride, count = e.name[len("warp_reduce_"):], 1, min(32, total)
    first = t - tirx.floormod(tirx.floordiv(t, const(stride, "int32")), const(count, "int32")) * const(stride, "int32")
    acc = None
    for j in range(count):
        saved, ctx.tid = ctx.tid, first + const(j * stride, "int32")
        try:
            x = ctx.expr(e.args[0])
        finally:
            ctx.tid = saved
        acc = x if acc is None else _combine(tirx, op, acc, x)
    return acc


def _combine(tirx, op: str, acc, x):
    return {"sum": tirx.Add, "max": tirx.Max, "min": tirx.Min, "bitand": tirx.bitwise_and,
            "bitor": tirx.bitwise_or}[op](acc, x)
