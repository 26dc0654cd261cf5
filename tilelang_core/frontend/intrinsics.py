"""Scalar intrinsics with non-expression arguments: IEEE arithmetic with a rounding mode, vector atomics,
device printing (`T.print`), `T.transpose`
(desugared to a T.Parallel loop), the warp-wide tensor-core product `T.ptx_mma`
and the operand fragment loads of the tensor-core emitter (`T.mma_fragment_load`).

A rounding mode other than the default "rn" is part of the Call name (`ieee_add_rz`); a print message is a
`Const(msg, "str")`.
"""
from __future__ import annotations

import ast
import math

from ..ir import nodes as N
from ..language.arg_checks import ROUNDING_MODES
from .expr_info import expr_dtype
from .kernel_errors import KernelError

IEEE_ARITY = {"ieee_add": 2, "ieee_sub": 2, "ieee_mul": 2, "ieee_fmaf": 3, "ieee_frcp": 1, "ieee_fsqrt": 1,
              "ieee_frsqrt": 1, "ieee_fdiv": 2}


def h_ieee(p, b, node, short):
    """T.ieee_add(x, y, rounding_mode="rn") and friends: a Call named by op and (non-default) rounding mode."""
    arity = IEEE_ARITY[short]
    mode_node = node.args[arity] if len(node.args) > arity else next(
        (k.value for k in node.keywords if k.arg == "rounding_mode"), None)
    mode = p.ev.eval(mode_node) if mode_node is not None else "rn"
    if mode not in ROUNDING_MODES or short == "ieee_frsqrt" and mode != "rn":
        allowed = "'rn'" if short == "ieee_frsqrt" else "'rn', 'rz', 'ru' or 'rd'"
        raise KernelError("bad-arguments", f"Invalid rounding mode `{ast.unparse(mode_node)}` for T.{short}: it "
                          f"must be {allowed}", mode_node)
    if len(node.args) < arity:
        raise KernelError("bad-arguments", f"T.{short} takes {arity} operand{'s' if arity > 1 else ''}", node)
    args = tuple(p.ev.scalar(a) for a in node.args[:arity])
    dtype = expr_dtype(args[0])
    if mode != "rn" and dtype in ("float16", "bfloat16"):
        raise KernelError("ieee-unsupported", f"T.{short} on {dtype} with rounding mode {mode!r}: Only rounding mode "
                          "'rn' is available for half precision (CUDA's half intrinsics round to nearest); use 'rn', "
                          "or compute in float32 and cast", mode_node)
    if short == "ieee_frsqrt" and dtype == "float64":
        raise KernelError("ieee-unsupported", "T.ieee_frsqrt is not supported for float64 (CUDA has no double "
                          "reciprocal square root); use 1.0 / T.ieee_fsqrt(x), or float32", node)
    name = short if mode == "rn" else f"{short}_{mode}"
    return N.Call(name, args, dtype, p.span(node))


def h_atomic_addx(p, b, node, short):
    """T.atomic_addx2/x4(dst, value): add 2 or 4 adjacent elements in one atomic; each side is the first element
    (`C[i, j * 4]`), a slice of exactly that many elements (`C[i, 0:4]`) or a buffer of that many."""
    if len(node.args) != 2 or any(k.arg == "return_prev" for k in node.keywords):
        raise KernelError("bad-arguments", f"T.{short} takes (dst, value) element addresses such as "
                          f"`T.{short}(C[i, j * 4], C_shared[r, j * 4])`; return_prev is not supported", node)
    width = int(short[-1])
    return N.Call(short, tuple(_vector_head(p, a, short, width) for a in node.args), "int32", p.span(node))


def _vector_head(p, a, short: str, width: int) -> N.Load:
    """The first element of a T.atomic_addx<width> operand."""
    from ..ir.arith import as_int
    from .regions import region_of

    sliced = isinstance(a, ast.Subscript) and any(
        isinstance(i, ast.Slice) for i in (a.slice.elts if isinstance(a.slice, ast.Tuple) else [a.slice]))
    v = region_of(p, a) if sliced else p.ev.eval(a)
    if isinstance(v, N.Load):
        return v
    if isinstance(v, (N.Buffer, N.Region)):
        region = v if isinstance(v, N.Region) else N.Region(v, tuple(N.Axis(N.Const(0), d) for d in v.shape))
        extents = [as_int(ax.extent) for ax in region.axes if ax.sliced]
        if None in extents or math.prod(extents) == width:
            return N.Load(region.buffer, tuple(ax.start for ax in region.axes), p.span(a))
    raise KernelError("bad-arguments", f"each argument of T.{short} is {width} adjacent elements of a buffer: the "
                      f"first (`buf[i, j]`), a slice of {width} or a buffer of {width} (got `{ast.unparse(a)}`)", a)


def h_print(p, b, node, short):
    """T.print(obj=None, msg="", warp_group_id=0, warp_id=0): Call("print", (value, Const(msg, "str"))) for a
    scalar (every thread prints), Call("print_buffer", (head Load, msg, Const(printing thread))) for a buffer."""
    names = ("obj", "msg", "warp_group_id", "warp_id")
    args = dict(zip(names, node.args))
    args.update({k.arg: k.value for k in node.keywords if k.arg in names})
    obj = p.ev.eval(args["obj"]) if "obj" in args else None
    msg = p.ev.eval(args["msg"]) if "msg" in args else ""
    if not isinstance(msg, str):
        raise KernelError("bad-arguments", "the msg of T.print must be a string", args["msg"])
    lane = 0
    for k, size in (("warp_group_id", 128), ("warp_id", 32)):
        if k in args:
            v = p.ev.eval(args[k])
            if not isinstance(v, int):
                raise KernelError("bad-arguments", f"{k} of T.print must be a compile-time integer", args[k])
            lane += v * size
    span = p.span(node)
    if isinstance(obj, N.Buffer) and obj.scope != "local.var":
        head = N.Load(obj, tuple(N.Const(0) for _ in obj.shape), span)
        return N.Call("print_buffer", (head, N.Const(msg or f"buffer<{obj.name}, {obj.dtype}>", "str"),
                                       N.Const(lane)), "int32", span)
    if obj is None:
        if not msg:
            raise KernelError("bad-arguments", "T.print needs a value to print or a msg", node)
        return N.Call("print", (N.Const(msg, "str"),), "int32", span)
    return N.Call("print", (p.ev.scalar(args["obj"]), N.Const(msg, "str")), "int32", span)


def h_transpose(p, b, node, short):
    """T.transpose(src, dst): dst[..., j, i] = src[..., i, j], written out as the equivalent T.Parallel loop."""
    from ..ir.arith import as_int
    from .regions import region_of

    if len(node.args) < 2:
        raise KernelError("bad-arguments", "T.transpose takes (src, dst)", node)
    src, dst = (region_of(p, a) for a in node.args[:2])
    s_tile, d_tile = ([a for a in r.axes if a.sliced] for r in (src, dst))
    s_ext, d_ext = ([as_int(a.extent) for a in t] for t in (s_tile, d_tile))
    if len(s_tile) < 2 or None in s_ext or s_ext[:-2] + s_ext[-2:][::-1] != d_ext:
        raise KernelError("bad-arguments", f"T.transpose needs a src tile of shape (..., M, N) and a dst tile of "
                          f"shape (..., N, M) known at compile time (got {s_ext} and {d_ext})", node)
    span = p.span(node)
    loop_vars = tuple(N.Var(f"t{k}", "int32", "loop", span) for k in range(len(s_tile)))
    swapped = loop_vars[:-2] + loop_vars[-2:][::-1]
    p.emit(N.For(loop_vars, tuple(N.Const(0) for _ in loop_vars), tuple(N.Const(e) for e in s_ext), "parallel",
                 N.Store(dst.buffer, _at(dst, swapped), N.Load(src.buffer, _at(src, loop_vars), span), span),
                 span=span))


def h_tma_copy(p, b, node, short):
    """T.tma_copy(src, dst, barrier=...): a T.copy (the CUDA backend copies with the calling threads, which then
    arrive on the barrier themselves; no transaction bytes are posted)."""
    from .regions import region_of

    if len(node.args) < 2:
        raise KernelError("bad-arguments", "T.tma_copy takes (src, dst, barrier=...)", node)
    p.emit(N.Copy(region_of(p, node.args[0]), region_of(p, node.args[1]), p.span(node), tma=True))


MMA_SHAPES = {"m16n8k16": ("fp16", "bf16"), "m16n8k32": ("int8", "uint8")}
MMA_ACCUM = {"fp16": ("fp32", "fp16"), "bf16": ("fp32",), "int8": ("int32",), "uint8": ("int32",)}


def h_ptx_mma(p, b, node, short):
    """T.ptx_mma(dtype, shape, "row", "col", a_type, b_type, c_type, A.data, a_offset, B.data, b_offset, C.data,
    c_offset, saturate): one warp-wide `mma.sync` on per-thread registers; Call("ptx_mma", (shape, a_type, c_type,
    A head, B head, C head)) with the heads `A[a_offset]`, ... of the threads' local buffers."""
    if len(node.args) < 13:
        raise KernelError("bad-arguments", "T.ptx_mma takes (dtype, shape, A_layout, B_layout, A_dtype, B_dtype, "
                          "C_dtype, A_data, A_offset, B_data, B_offset, C_data, C_offset, saturate)", node)
    shape, a_layout, b_layout, a_type, b_type, c_type = (p.ev.eval(a) for a in node.args[1:7])
    if shape not in MMA_SHAPES or a_type not in MMA_SHAPES[shape] or b_type != a_type or \
            c_type not in MMA_ACCUM[a_type] or (a_layout, b_layout) != ("row", "col"):
        raise KernelError("bad-arguments", f"T.ptx_mma {shape} {a_layout}.{b_layout} {a_type} x {b_type} -> {c_type} "
                          "is not supported; use m16n8k16 (fp16/bf16 -> fp32, fp16 -> fp16) or m16n8k32 (int8/uint8 "
                          "-> int32), row.col", node)
    heads = []
    for data, offset in ((node.args[7], node.args[8]), (node.args[9], node.args[10]), (node.args[11], node.args[12])):
        buf = p.ev.eval(data)
        if not isinstance(buf, N.Buffer) or buf.scope != "local" or len(buf.shape) != 1:
            raise KernelError("bad-arguments", f"the operands of T.ptx_mma are one-dimensional T.alloc_local "
                              f"buffers (`buf.data`); `{ast.unparse(data)}` is not one", data)
        heads.append(N.Load(buf, (p.ev.scalar(offset),), p.span(data)))
    return N.Call("ptx_mma", (N.Const(shape, "str"), N.Const(a_type, "str"), N.Const(c_type, "str"), *heads),
                  "int32", p.span(node))


def h_mma_fragment_load(p, b, node, short):
    """T.mma_fragment_load(dst, src, matrix, transposed, per_reg, size): a thread's registers of one mma operand tile
    (the TensorCoreIntrinEmitter's ldmatrix_a/_b, compat/mma_emitter.py), read from the tile at head address
    `src` of a shared buffer, stored (rows, K), or (K, rows) when `transposed`. Value v of lane l is register
    q = v // per_reg: row l // 4 + 8 * (q % 2) for "a", l // 4 + 8 * (q // 2) for "b"; column (K)
    (l % 4) * per_reg + v % per_reg + 4 * per_reg * (q // 2 for "a", q % 2 for "b").
    Call("mma_fragment_load", (dst head, src head, Const(matrix), Const(transposed), Const(per_reg), Const(size)))."""
    if len(node.args) != 6:
        raise KernelError("bad-arguments", "T.mma_fragment_load takes (dst, src, matrix, transposed, per_reg, size)",
                          node)
    dst, src = (p.ev.eval(a) for a in node.args[:2])
    matrix, transposed, per_reg, size = (p.ev.eval(a) for a in node.args[2:])
    if not isinstance(dst, N.Load) or dst.buffer.scope != "local" or not isinstance(src, N.Load) or \
            src.buffer.scope not in ("shared", "shared.dyn") or len(src.indices) < 2 or matrix not in ("a", "b"):
        raise KernelError("bad-arguments", "T.mma_fragment_load reads a tile of a shared buffer (`S[r, c]`) into a "
                          "T.alloc_local buffer (`L[i]`); matrix is \"a\" or \"b\"", node)
    return N.Call("mma_fragment_load", (dst, src, N.Const(matrix, "str"), N.Const(bool(transposed), "bool"),
                                        N.Const(int(per_reg)), N.Const(int(size))), "int32", p.span(node))


def _at(region: N.Region, loop_vars) -> tuple:
    """Element indices of a region with its sliced axes driven by `loop_vars` in order."""
    from ..ir.arith import as_int

    it = iter(loop_vars)
    return tuple((next(it) if as_int(a.start) == 0 else N.BinOp("+", a.start, next(it))) if a.sliced else a.start
                 for a in region.axes)


INTRINSIC_HANDLERS = {
    **{name: h_ieee for name in IEEE_ARITY}, "atomic_addx2": h_atomic_addx, "atomic_addx4": h_atomic_addx,
    "print": h_print,
    "transpose": h_transpose, "tma_copy": h_tma_copy, "ptx_mma": h_ptx_mma,
    "mma_fragment_load": h_mma_fragment_load,
}
