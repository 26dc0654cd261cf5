"""Warp and block votes, written over the reductions both backends lower: `T.any_sync(p)` is the warp's max of
`p != 0`, `T.all_sync(p)` its min, `T.ballot_sync(p)` / `T.ballot(p)` the OR of `(p != 0) << lane` (a uint64, as
TileLang zero-extends CUDA's 32-bit ballot); `T.syncthreads_count/and/or(p)` a barrier, then the block's sum, min or
max of `p != 0` (a thread all-reduce over a 1-D block). The predicate is an integer or boolean; the mask, when given,
the full warp."""
from __future__ import annotations

import ast

from ..ir import nodes as N
from ..language.arg_checks import vote_predicate_error
from .expr_info import expr_dtype
from .handler_args import src_text
from .kernel_errors import KernelError
from .reducers import REDUCER_OPS
from .threadops import WARP_SIZE

FULL_MASK = 0xFFFFFFFF


def h_warp_vote(p, b, node, short):
    """T.any_sync / all_sync / ballot_sync / ballot(predicate[, mask]): one value per lane, the same on every lane."""
    if b.get("predicate") is None:
        raise KernelError("bad-arguments", f"T.{short} needs a predicate", node)
    pred = p.ev.scalar(b["predicate"])
    message = vote_predicate_error(short, expr_dtype(pred))
    if message:
        raise KernelError("bad-arguments", f"{message}; compare it (`x > 0`) to make one", b["predicate"])
    mask = b.get("mask")  # the catalog's default (the full mask) when not written
    if isinstance(mask, ast.AST) and p.ev.eval(mask) not in (FULL_MASK, -1):
        raise KernelError("lowering-unsupported", f"T.{short} over part of a warp (mask `{src_text(mask)}`) is not "
                          "supported; vote over the whole warp (mask 0xFFFFFFFF) and mask the result", mask)
    span = p.span(node)
    flag = pred if expr_dtype(pred) == "bool" else N.Compare("!=", pred, N.Const(0, expr_dtype(pred)), span)
    if short.startswith("syncthreads_"):
        return _block_vote(p, short, N.Cast("int32", flag, span), node, span)
    if short in ("any_sync", "all_sync"):
        reduce = "warp_reduce_max" if short == "any_sync" else "warp_reduce_min"
        return N.Call(reduce, (N.Cast("int32", flag, span),), "int32", span)
    lane = N.Call("get_lane_idx", (N.Const(WARP_SIZE),), "int32", span)
    bit = N.BinOp("<<", N.Cast("uint32", flag, span), N.Cast("uint32", lane, span), span)
    return N.Cast("uint64", N.Call("warp_reduce_bitor", (bit,), "uint32", span), span)


def _block_vote(p, short: str, flag, node, span):
    """T.syncthreads_count / and / or: a barrier (as CUDA's are), then the block's sum / min / max of the 0/1 flag."""
    if len(p.launch_threads) != 1:
        raise KernelError("lowering-unsupported", f"T.{short} over a {len(p.launch_threads)}-D thread block is not "
                          "supported; launch a 1-D block (`threads=n`)", node)
    p.emit(N.Evaluate(N.Call("sync_threads", (), "int32", span), span))
    op = REDUCER_OPS.index({"count": "sum", "and": "min", "or": "max"}[short.removeprefix("syncthreads_")])
    return N.Call("thread_allreduce", (flag, N.Const(op), N.Const(0)), "int32", span)


WARP_VOTE_HANDLERS = {name: h_warp_vote for name in ("any_sync", "all_sync", "ballot_sync", "ballot",
                                                     "syncthreads_count", "syncthreads_and", "syncthreads_or")}
