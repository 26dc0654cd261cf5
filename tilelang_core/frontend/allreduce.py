"""TVM's raw thread all-reduce as the real examples write it:
`with T.attr(T.comm_reducer(lambda x, y: x + y, [zero]), "reduce_scope", ...):
T.evaluate(T.tvm_thread_allreduce(T.uint32(1), value, True, result[0], tx, dtype="handle"))`
becomes `result[0] = Call("thread_allreduce", (value, Const(op), Const(axis)))`: the combined `value` of the
threads along threadIdx axis `axis`, op an index into REDUCER_OPS.
"""
from __future__ import annotations

import ast

from ..ir import nodes as N
from .expr_info import expr_dtype
from .kernel_errors import KernelError
from .reducers import REDUCER_OPS


def _reducer_op(p, call) -> int | None:
    """The REDUCER_OPS index of a `T.comm_reducer(lambda x, y: ..., ...)` (None when it is not one we know)."""
    fn = call.args[0] if call.args else None
    if not isinstance(fn, ast.Lambda) or len(fn.args.args) != 2:
        return None
    x, y = (a.arg for a in fn.args.args)
    body = fn.body
    if isinstance(body, ast.BinOp) and isinstance(body.op, ast.Add):
        operands = body.left, body.right
        op = "sum"
    elif isinstance(body, ast.Call) and isinstance(body.func, ast.Attribute) and body.func.attr in ("max", "min"):
        operands, op = tuple(body.args), body.func.attr
    else:
        return None
    names = {a.id for a in operands if isinstance(a, ast.Name)}
    return REDUCER_OPS.index(op) if names == {x, y} else None


def parse_reduce_scope(p, node: ast.With, call: ast.Call) -> list:
    """`with T.attr(T.comm_reducer(...), "reduce_scope", ...):` parses its body with that reducer in scope."""
    reducer = call.args[0] if call.args else None
    op = _reducer_op(p, reducer) if isinstance(reducer, ast.Call) else None
    if op is None:
        raise KernelError("unsupported-syntax", "the T.comm_reducer of a reduce_scope must be "
                          "`lambda x, y: x + y`, `T.max(x, y)` or `T.min(x, y)`", reducer or call)
    saved, p.allreduce_op = getattr(p, "allreduce_op", None), op
    try:
        return p.block(node.body)
    finally:
        p.allreduce_op = saved


def h_evaluate(p, b, node, short):
    """T.evaluate(expr): the expression as a statement."""
    return p.ev.eval(node.args[0]) if node.args else None


def h_thread_allreduce(p, b, node, short):
    """T.tvm_thread_allreduce(size, value, cond, result, *threads): result = value combined over those threads."""
    op = getattr(p, "allreduce_op", None)
    if op is None:
        raise KernelError("unsupported-syntax", "T.tvm_thread_allreduce belongs inside `with T.attr(T.comm_reducer("
                          "...), \"reduce_scope\", ...)`; T.reduce_sum over a fragment is the tile-level spelling",
                          node)
    if len(node.args) != 5:
        raise KernelError("unsupported-syntax", "T.tvm_thread_allreduce is supported for one value reduced over "
                          "one thread axis: (T.uint32(1), value, True, result[i], thread_index)", node)
    value, result, axis = p.ev.scalar(node.args[1]), p.ev.eval(node.args[3]), p.ev.eval(node.args[4])
    if not isinstance(result, N.Load):
        raise KernelError("bad-arguments", "the result of T.tvm_thread_allreduce must be a buffer element",
                          node.args[3])
    if not (isinstance(axis, N.Call) and axis.name == "get_thread_binding"):
        raise KernelError("unsupported-syntax", "T.tvm_thread_allreduce reduces over a thread index "
                          "(T.get_thread_binding / T.thread_binding)", node.args[4])
    span = p.span(node)
    total = N.Call("thread_allreduce", (value, N.Const(op), axis.args[0]), expr_dtype(value), span)
    p.emit(N.Store(result.buffer, result.indices, total, span))
    return None


ALLREDUCE_HANDLERS = {"evaluate": h_evaluate, "tvm_thread_allreduce": h_thread_allreduce}
