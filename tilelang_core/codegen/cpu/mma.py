"""`T.ptx_mma` and `T.mma_fragment_load` on the CPU backend. The load is per-thread: the registers of the thread's
lane, read from shared memory. The product is one warp-wide `mma.sync.m16n8kK` computed by each thread for its own four
accumulator registers from the A and B registers of the lanes of its warp (the PTX fragment layouts), an fp16
accumulator summed in float32 over the instruction's K and rounded once, as the tensor core does.

It runs in a barrier phase of its own (cpu/simt.py makes it a collective), so every lane's operands are loaded
before any lane reads them. With e = 32 / operand bits elements per register and K = 8 * e:
- C register v of lane l holds (row l // 4 + 8 * (v // 2), column 2 * (l % 4) + v % 2);
- A (row r, k) is in lane (r % 8) * 4 + (k % 4e) // e, register k % e + e * (r // 8 + 2 * (k // 4e));
- B (k, column n) is in lane n * 4 + (k % 4e) // e, register k % e + e * (k // 4e).
"""
from __future__ import annotations

from ...ir import nodes as N
from .expr import cast, const, index_expr

_BITS = {"fp16": 16, "bf16": 16, "int8": 8, "uint8": 8}
_ACCUM = {"fp32": "float32", "fp16": "float16", "int32": "int32"}
_STEP = {"float32": "float32", "float16": "float32", "int32": "int32"}  # an fp16 C is summed wider, rounded per MMA


def mma_sync(ctx, call: N.Call) -> list:
    """The current thread's part of one T.ptx_mma: its four accumulators += A_tile @ B_tile."""
    tirx = ctx.tirx
    a_type, c_type = call.args[1].value, call.args[2].value
    a_head, b_head, c_head = call.args[3:]
    e = 32 // _BITS[a_type]
    k_dim, wide = 8 * e, 4 * e
    acc_dtype = _STEP[_ACCUM[c_type]]
    lane = tirx.floormod(ctx.tid, const(32, "int32"))
    warp0 = ctx.tid - lane

    def other(head: N.Load, lane_expr, reg_expr):
        """Element `reg` of lane `lane`'s copy of the private buffer, from the head offset."""
        buf = ctx.buffer(head.buffer, call.span)
        rows = ctx.simt.private_rows(head.buffer)
        at = ctx.analyzer.simplify(index_expr(ctx.expr(head.indices[0])) + reg_expr + (warp0 + lane_expr) * rows)
        return cast(tirx.BufferLoad(buf, [at]), acc_dtype)

    v, k = ctx.fresh("mma_v"), ctx.fresh("mma_k")
    row = tirx.floordiv(lane, const(4, "int32")) + const(8, "int32") * tirx.floordiv(v, const(2, "int32"))
    col = const(2, "int32") * tirx.floormod(lane, const(4, "int32")) + tirx.floormod(v, const(2, "int32"))
    k_in = tirx.floormod(k, const(wide, "int32"))
    k_blk = tirx.floordiv(k, const(wide, "int32"))
    k_reg = tirx.floormod(k, const(e, "int32"))
    a = other(a_head, tirx.floormod(row, const(8, "int32")) * const(4, "int32") + tirx.floordiv(k_in, const(e, "int32")),
              k_reg + const(e, "int32") * (tirx.floordiv(row, const(8, "int32")) + const(2, "int32") * k_blk))
    b = other(b_head, col * const(4, "int32") + tirx.floordiv(k_in, const(e, "int32")), k_reg + const(e, "int32") * k_blk)
    c_buf = ctx.buffer(c_head.buffer, call.span)
    c_at = ctx.private(c_head.buffer, [index_expr(ctx.expr(c_head.indices[0])) + v], call.span)
    part = tirx.decl_buffer((1,), acc_dtype, "mma_acc", scope="local")
    zero = const(0, "int32")
    update = tirx.BufferStore(part, tirx.BufferLoad(part, [zero]) + a * b, [zero])
    step = tirx.SeqStmt([
        tirx.AllocBuffer(part), tirx.BufferStore(part, cast(tirx.BufferLoad(c_buf, c_at), acc_dtype), [zero]),
        tirx.For(k, zero, const(k_dim, "int32"), tirx.ForKind.SERIAL, update),
        tirx.BufferStore(c_buf, cast(tirx.BufferLoad(part, [zero]), str(c_buf.dtype)), c_at)])
    return [tirx.For(v, zero, const(4, "int32"), tirx.ForKind.SERIAL, step)]


def fragment_load(ctx, call: N.Call) -> list:
    """The current thread's registers of one T.mma_fragment_load (the layout of frontend/intrinsics.py)."""
    tirx = ctx.tirx
    dst, src = call.args[:2]
    matrix, transposed, e, size = (a.value for a in call.args[2:])
    lane = tirx.floormod(ctx.tid, const(32, "int32"))
    v = ctx.fresh("frag_v")
    q = tirx.floordiv(v, const(e, "int32"))
    two = const(2, "int32")
    row_block, k_block = (tirx.floormod(q, two), tirx.floordiv(q, two)) if matrix == "a" else \
        (tirx.floordiv(q, two), tirx.floormod(q, two))
    row = tirx.floordiv(lane, const(4, "int32")) + const(8, "int32") * row_block
    col = tirx.floormod(lane, const(4, "int32")) * const(e, "int32") + tirx.floormod(v, const(e, "int32")) + \
        const(4 * e, "int32") * k_block
    origin = [index_expr(ctx.expr(i)) for i in src.indices]
    at = origin[:-2] + ([origin[-2] + col, origin[-1] + row] if transposed else [origin[-2] + row, origin[-1] + col])
    src_buf, dst_buf = ctx.buffer(src.buffer, call.span), ctx.buffer(dst.buffer, call.span)
    dst_at = ctx.private(dst.buffer, [index_expr(ctx.expr(dst.indices[0])) + v], call.span)
    store = tirx.BufferStore(dst_buf, cast(tirx.BufferLoad(src_buf, at), str(dst_buf.dtype)), dst_at)
    return [tirx.For(v, const(0, "int32"), const(size, "int32"), tirx.ForKind.SERIAL, store)]
