"""Tile ops → whole-tile loop nests for the CPU backend (copy, gemm, fill, reduce, cumsum, atomic_add,
atomic_addx2/x4, and T.dp4a's four-element int8 dot product).

A `View` is a tile-op operand after lowering: a tirx buffer, per-axis starts and extents. Every access is
guarded unless the bound is provable: reads outside give 0, writes outside are skipped (partial tiles).
"""
from __future__ import annotations

from dataclasses import dataclass

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.copy_extent import loop_extents
from ..tvm_loader import load
from .expr import FP8, LoweringError, as_bool, cast, const, dtype_of, infinity, is_float, promote
from .intrinsics import intrinsic

MMA_K = 16  # the k depth of one fp16/bf16 tensor-core MMA step (mma.m16n8k16, wgmma k16)
MMA_STEP_DTYPES = ("float16",)  # accumulators a tensor core rounds once per MMA step (bf16 operands need fp32)

_BITWISE = {"bitand": "bitwise_and", "bitor": "bitwise_or", "bitxor": "bitwise_xor"}


@dataclass
class View:
    """A lowered region: buffer, start and extent per axis (extent an int when known), global flag."""

    region: N.Region
    buf: object
    starts: list
    extents: list  # int | tirx expr
    is_global: bool
    dtype: str  # the element dtype (fp8 for a buffer stored as uint8 bits)

    def tile_axes(self) -> list[int]:
        """The axes that span more than one element (unknown extents count as spanning)."""
        return [d for d, e in enumerate(self.extents) if not (isinstance(e, int) and e == 1)]

    def at(self, axes: list[int], vars_) -> list:
        """Indices of the element at `vars_` along `axes` (other axes at their start)."""
        idx = list(self.starts)
        for d, v in zip(axes, vars_):
            idx[d] = idx[d] + v
        return idx


class OpLowering:
    """Lowers tile ops; `ctx` gives expression lowering, fresh loops and bounds guards."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.tirx = load().tirx

    # -- views ---------------------------------------------------------------------------------
    def view(self, region: N.Region, like: "View | None" = None) -> View:
        """Lower a Region; a point region takes its trailing extents from `like` (T.copy head address)."""
        buf = self.ctx.buffer(region.buffer, region.span)
        axes = region.axes or tuple(N.Axis(N.Const(0), d) for d in region.buffer.shape)
        starts = self.ctx.private(region.buffer, self.ctx.expr.indices(region.buffer, [a.start for a in axes]),
                                  region.span)
        extents = [self._extent(a.extent) for a in axes]
        if region.kind == "point" and like is not None:
            tile = [like.extents[d] for d in like.tile_axes()]
            for k, ext in enumerate(reversed(tile)):
                if k < len(extents):
                    extents[-1 - k] = ext
        return View(region, buf, starts, extents, region.buffer.scope == "global", self.ctx.element_dtype(buf))

    def _extent(self, e):
        v = as_int(e)
        return v if v is not None else self.ctx.index(e)

    def nest(self, extents, body_fn, name="i"):
        """A serial loop nest over `extents`; body_fn(vars) builds the innermost statement."""
        return self.ctx.loop_nest([(name + str(k), e) for k, e in enumerate(extents)], body_fn)

    def read(self, view: View, idx):
        """A guarded load (0 outside a global tensor)."""
        return self.ctx.guarded_load(view.buf, idx, view.is_global)

    def write(self, view: View, idx, value):
        """A guarded store, converting `value` to the buffer's dtype (fp8: the store converts it)."""
        return self.ctx.guarded_store(view.buf, idx, value if view.dtype in FP8 else cast(value, view.dtype),
                                      view.is_global)

    # -- ops -----------------------------------------------------------------------------------
    def copy(self, op: N.Copy):
        """T.copy: element-wise, converting dtype."""
        src = self.view(op.src)
        dst = self.view(op.dst, like=src)
        if op.src.kind == "point":
            src = self.view(op.src, like=dst)
        sa, da = src.tile_axes(), dst.tile_axes()
        s_ext, d_ext = [src.extents[d] for d in sa], [dst.extents[d] for d in da]
        if len(sa) != len(da):
            return self._copy_right_aligned(src, dst, op)
        ext = loop_extents(s_ext, d_ext, op.src.buffer.scope, op.dst.buffer.scope)  # differing: TileLang's rule
        if ext is None:
            raise LoweringError(f"T.copy: the destination tile {_shape(d_ext)} is smaller than the source tile "
                                f"{_shape(s_ext)}; make the slice extents agree", op.span, "copy-extent-mismatch")
        return self.nest(ext, lambda v: self.write(dst, dst.at(da, v), self.read(src, src.at(sa, v))))

    def _copy_right_aligned(self, src: View, dst: View, op: N.Copy):
        """T.copy whose sides differ in their number of non-1 axes: axes pair from the right, an extent of 1
        taking the other side's (as TileLang legalizes it)."""
        rank = max(len(src.extents), len(dst.extents))
        s_pad = [1] * (rank - len(src.extents)) + list(src.extents)
        d_pad = [1] * (rank - len(dst.extents)) + list(dst.extents)
        ext = []
        for a, b in zip(s_pad, d_pad):
            if isinstance(a, int) and isinstance(b, int) and 1 not in (a, b) and a != b:
                raise LoweringError(f"T.copy: the source tile {_shape(src.extents)} and the destination tile "
                                    f"{_shape(dst.extents)} differ; make the slice extents agree", op.span,
                                    "copy-extent-mismatch")
            ext.append(b if (isinstance(a, int) and a == 1) else a)
        s_off, d_off = rank - len(src.extents), rank - len(dst.extents)

        def index(view: View, pad, off, v):
            return view.at([k - off for k in range(off, rank) if not (isinstance(pad[k], int) and pad[k] == 1)],
                           [v[k] for k in range(off, rank) if not (isinstance(pad[k], int) and pad[k] == 1)])

        return self.nest(ext, lambda v: self.write(dst, index(dst, d_pad, d_off, v),
                                                   self.read(src, index(src, s_pad, s_off, v))))

    def fill(self, op: N.Fill):
        """T.fill / T.clear: store a value into every element of the region."""
        dst = self.view(op.dst)
        axes = list(range(len(dst.extents)))
        value = self.ctx.expr(op.value)
        return self.nest(dst.extents, lambda v: self.write(dst, dst.at(axes, v), value))

    def _matrix(self, view: View, what: str, span):
        """The two matrix axes of a gemm operand (the last two axes of its region)."""
        if len(view.extents) < 2:
            raise LoweringError(f"T.gemm: operand {what} must be a 2-D tile", span, "gemm-shape-mismatch")
        return [len(view.extents) - 2, len(view.extents) - 1]

    def gemm(self, op: N.Gemm):
        """T.gemm: C (+)= op(A) @ op(B) in C's dtype; a float16 C takes each MMA k-step (16 deep) summed in
        float32 and rounds once per step, as a tensor core does (a product at a time in fp16 drifts past 1e-2)."""
        a, b, c = self.view(op.a), self.view(op.b), self.view(op.c)
        aa, ba, ca = self._matrix(a, "A", op.span), self._matrix(b, "B", op.span), self._matrix(c, "C", op.span)
        m, k = (a.extents[aa[1]], a.extents[aa[0]]) if op.transpose_a else (a.extents[aa[0]], a.extents[aa[1]])
        n = b.extents[ba[0]] if op.transpose_b else b.extents[ba[1]]
        acc, tirx, prologue = c.dtype, self.tirx, []
        if op.transpose_b:  # B^T into a k x n scratch: the inner loop then runs along contiguous n (vectorised)
            b_dt = "float32" if b.dtype in FP8 else b.dtype  # fp8 reads are decoded to float32
            b_t = tirx.decl_buffer([self.ctx.as_expr(k), self.ctx.as_expr(n)], b_dt, "B_t", scope="global")
            prologue = [tirx.AllocBuffer(b_t), self.nest(
                [k, n], lambda v: tirx.BufferStore(b_t, self.read(b, b.at(ba, [v[1], v[0]])), list(v)), "t")]

        def b_at(kk, j):
            return tirx.BufferLoad(b_t, [kk, j]) if op.transpose_b else self.read(b, b.at(ba, [kk, j]))

        def product(i, kk, j, dtype):
            ai = a.at(aa, [kk, i] if op.transpose_a else [i, kk])
            return tirx.Mul(cast(self.read(a, ai), dtype), cast(b_at(kk, j), dtype))

        def body(v):
            i, kk, j = v
            ci = c.at(ca, [i, j])
            return self.write(c, ci, tirx.Add(self.read(c, ci), product(i, kk, j, acc)))

        steps = acc in MMA_STEP_DTYPES
        loops = prologue + [self._gemm_steps(m, k, n, c, ca, product) if steps else self.nest([m, k, n], body, "g")]
        if op.clear_accum is not False:
            zero = const(0, acc)
            clear = self.nest([m, n], lambda v: self.write(c, c.at(ca, v), zero), "z")
            if isinstance(op.clear_accum, N.Expr):  # a run-time condition
                clear = self.tirx.IfThenElse(as_bool(self.ctx.expr(op.clear_accum)), clear, None)
            return [clear] + loops
        return loops

    def _gemm_steps(self, m, k, n, c: View, ca, product):
        """Row i of C over k-steps of MMA_K: a float32 row of partial sums loaded from C, the step's products added,
        stored back rounded to C's dtype (the innermost loops run along n)."""
        tirx, ctx = self.tirx, self.ctx
        k_expr = ctx.as_expr(k)
        steps = (k + MMA_K - 1) // MMA_K if isinstance(k, int) else tirx.floordiv(k_expr + const(MMA_K - 1, "int32"),
                                                                                 const(MMA_K, "int32"))

        def row(v):
            i, ks = v
            part = tirx.decl_buffer([ctx.as_expr(n)], "float32", "C_step", scope="local")
            load = self.nest([n], lambda w: tirx.BufferStore(part, cast(self.read(c, c.at(ca, [i, w[0]])), "float32"),
                                                             [w[0]]), "j")

            def add(w):
                kk, j = ks * const(MMA_K, "int32") + w[0], w[1]
                store = tirx.BufferStore(part, tirx.Add(tirx.BufferLoad(part, [j]), product(i, kk, j, "float32")), [j])
                if isinstance(k, int) and k % MMA_K == 0:
                    return store
                return tirx.IfThenElse(tirx.LT(kk, k_expr), store, None)

            accumulate = self.nest([MMA_K, n], add, "kk")
            store = self.nest([n], lambda w: self.write(c, c.at(ca, [i, w[0]]), tirx.BufferLoad(part, [w[0]])), "j")
            return tirx.SeqStmt([tirx.AllocBuffer(part), load, accumulate, store])

        return self.nest([m, steps], row, "g")

    def _identity(self, kind: str, dtype: str):
        tirx = self.tirx
        if kind in ("sum", "abssum", "absmax", "bitor", "bitxor"):
            return const(0, dtype)
        if kind == "bitand":
            return const(-1, dtype) if dtype.startswith("int") else tirx.max_value(dtype)
        if kind == "max":
            return infinity(dtype, negative=True) if is_float(dtype) else tirx.min_value(dtype)
        if kind == "min":
            return infinity(dtype) if is_float(dtype) else tirx.max_value(dtype)
        raise LoweringError(f"T.reduce_{kind} is not supported by the CPU backend")

    def _combine(self, kind: str, acc, x, nan_propagate: bool = False):
        """acc combined with x; a float max / min ignores a NaN (fmaxf / fminf), or with `nan_propagate` returns it."""
        tirx = self.tirx
        if kind in ("abssum", "absmax"):
            x = tirx.abs(x)
        if kind in ("sum", "abssum"):
            return tirx.Add(acc, x)
        if kind in _BITWISE:
            return getattr(tirx, _BITWISE[kind])(acc, x)
        best = tirx.Max(acc, x) if kind in ("max", "absmax") else tirx.Min(acc, x)
        if not is_float(dtype_of(acc)):
            return best
        if nan_propagate:
            return tirx.Select(tirx.isnan(x), x, tirx.Select(tirx.isnan(acc), acc, best))
        return tirx.Select(tirx.isnan(x), acc, tirx.Select(tirx.isnan(acc), x, best))

    def _reduce_dst(self, src: View, dst: View, dim: int, span):
        """Map a src element (without `dim`) to dst indices: dst drops `dim` or keeps it at extent 1."""
        rank_s, rank_d = len(src.extents), len(dst.extents)
        if rank_d == rank_s - 1:
            return lambda outer: dst.at(list(range(rank_d)), outer)
        if rank_d == rank_s:
            axes = [d for d in range(rank_s) if d != dim]
            return lambda outer: dst.at(axes, outer)
        raise LoweringError(f"reduce: the destination has rank {rank_d} but the source has rank {rank_s}; "
                            f"the destination must drop dimension {dim}", span)

    def reduce(self, op: N.Reduce):
        """T.reduce_<op>(src, dst, dim, clear) with a scalar accumulator per output element."""
        src, dst = self.view(op.src), self.view(op.dst)
        dim = op.dim if op.dim >= 0 else op.dim + len(src.extents)
        if not 0 <= dim < len(src.extents):
            raise LoweringError(f"reduce: dim={op.dim} is out of range for a rank-{len(src.extents)} tile", op.span)
        dst_at = self._reduce_dst(src, dst, dim, op.span)
        acc_dt = promote(dst.dtype, "float32") if is_float(dst.dtype) else dst.dtype
        outer_axes = [d for d in range(len(src.extents)) if d != dim]
        tirx = self.tirx

        def body(outer):
            acc = tirx.decl_buffer((1,), acc_dt, "acc", scope="local")
            di = dst_at(outer)
            init = tirx.BufferStore(acc, self._identity(op.op, acc_dt), [0])

            def step(r):
                idx = src.at(outer_axes + [dim], list(outer) + [r[0]])
                x = cast(self.read(src, idx), acc_dt)
                return tirx.BufferStore(acc, self._combine(op.op, tirx.BufferLoad(acc, [0]), x, op.nan_propagate), [0])

            red = self.nest([src.extents[dim]], step, "r")
            total = tirx.BufferLoad(acc, [0])
            if not op.clear:
                old = cast(self.read(dst, di), acc_dt)
                total = tirx.Add(old, total) if op.op in ("sum", "abssum") else self._combine(
                    "max" if op.op == "absmax" else op.op, old, total, op.nan_propagate)
            return tirx.SeqStmt([tirx.AllocBuffer(acc), init, red, self.write(dst, di, total)])

        return self.nest([src.extents[d] for d in outer_axes], body, "o")

    def cumsum(self, op: N.CumSum):
        """T.cumsum / T.cummax: inclusive (optionally reversed) prefix sum or running maximum along dim (the
        maximum starts from the line's first element)."""
        src, dst = self.view(op.src), self.view(op.dst)
        rank = len(src.extents)
        dim = op.dim if op.dim >= 0 else op.dim + rank
        outer_axes = [d for d in range(rank) if d != dim]
        acc_dt = promote(dst.dtype, "float32") if is_float(dst.dtype) else dst.dtype
        tirx = self.tirx
        ext = src.extents[dim]

        def body(outer):
            acc = tirx.decl_buffer((1,), acc_dt, "acc", scope="local")

            def step(r):
                pos = (self.ctx.as_expr(ext) - 1 - r[0]) if op.reverse else r[0]
                si = src.at(outer_axes + [dim], list(outer) + [pos])
                di = dst.at(outer_axes + [dim], list(outer) + [pos])
                x, old = cast(self.read(src, si), acc_dt), tirx.BufferLoad(acc, [0])
                first = tirx.EQ(r[0], const(0, dtype_of(r[0])))
                new = tirx.Add(old, x) if op.op == "sum" else tirx.Select(first, x, intrinsic("max", [old, x], None))
                return tirx.SeqStmt([tirx.BufferStore(acc, new, [0]), self.write(dst, di, tirx.BufferLoad(acc, [0]))])

            scan = self.nest([ext], step, "s")
            return tirx.SeqStmt([tirx.AllocBuffer(acc), tirx.BufferStore(acc, const(0, acc_dt), [0]), scan])

        return self.nest([src.extents[d] for d in outer_axes], body, "o")

    def atomic_add(self, op: N.AtomicAdd):
        """T.atomic_add: dst += value (a tile, or a scalar into one element or every element of a region; a TMA
        reduce-add, use_tma=True, adds the same); grid loops run serially when a kernel has one."""
        if isinstance(op.value, N.Region):
            src = self.view(op.value)
            dst = self.view(op.dst, like=src)
            sa, da = src.tile_axes(), dst.tile_axes()
            ext = [src.extents[d] for d in sa]

            def body(v):
                di = dst.at(da, v)
                return self.write(dst, di, self.tirx.Add(*_same(self.read(dst, di), self.read(src, src.at(sa, v)))))

            return self.nest(ext, body, "a")
        dst = self.view(op.dst)
        value = self.ctx.expr(op.value)
        if op.dst.kind == "point":
            idx = list(dst.starts)
            return self.write(dst, idx, self.tirx.Add(*_same(self.read(dst, idx), value)))
        axes = dst.tile_axes()  # a scalar added to every element of a region

        def element(v):
            idx = dst.at(axes, v)
            return self.write(dst, idx, self.tirx.Add(*_same(self.read(dst, idx), value)))

        return self.nest([dst.extents[d] for d in axes], element, "a")


VECTOR_ATOMICS = {name: ("float16", "bfloat16", "float32", "int32") for name in ("atomic_addx2", "atomic_addx4")}


def vector_atomic_stores(call: N.Call) -> list:
    """T.atomic_addx2/x4(dst[.., j], src[.., k]): `dst[.., j + i] += src[.., k + i]` for each of the 2 or 4 adjacent
    elements (the CUDA dtypes only; a block's atomics run in program order, blocks one after another)."""
    dst, src = call.args
    width, dtypes = int(call.name[-1]), VECTOR_ATOMICS[call.name]
    if dst.buffer.dtype not in dtypes or src.buffer.dtype != dst.buffer.dtype:
        raise LoweringError(f"T.{call.name} adds {width} adjacent {' / '.join(dtypes)} elements; both sides must "
                            f"have that dtype (got {dst.buffer.dtype} and {src.buffer.dtype})", call.span)

    def shifted(load: N.Load, i: int) -> tuple:
        *lead, last = load.indices
        return (*lead, N.BinOp("+", last, N.Const(i)) if i else last)

    return [N.Store(dst.buffer, shifted(dst, i),
                    N.BinOp("+", N.Load(dst.buffer, shifted(dst, i)), N.Load(src.buffer, shifted(src, i))), call.span)
            for i in range(width)]


def dp4a_store(call: N.Call) -> N.Store:
    """T.dp4a(A, B, C) (the frontend's three access_ptr calls): `C += A[0]*B[0] + ... + A[3]*B[3]` over the four int8
    values that lie from each head on in memory (row-major), in int32 as CUDA's __dp4a."""
    a, b, c = (ptr.args[0] for ptr in call.args)
    total = N.Load(c.buffer, c.indices, call.span)
    for k in range(4):
        product = N.BinOp("*", N.Cast("int32", N.Load(a.buffer, _after(a, k))),
                          N.Cast("int32", N.Load(b.buffer, _after(b, k))))
        total = N.BinOp("+", total, product)
    return N.Store(c.buffer, c.indices, total, call.span)


def _after(head: N.Load, k: int) -> tuple:
    """The indices of the element `k` places after `head` in its buffer's row-major order."""
    if not k:
        return head.indices
    flat = head.indices[0]
    for index, extent in zip(head.indices[1:], head.buffer.shape[1:]):
        flat = N.BinOp("+", N.BinOp("*", flat, extent), index)
    flat = N.BinOp("+", flat, N.Const(k))
    out = []
    for extent in reversed(head.buffer.shape[1:]):
        out.append(N.BinOp("%", flat, extent))
        flat = N.BinOp("//", flat, extent)
    return (flat, *reversed(out))


def _same(a, b):
    return a, cast(b, dtype_of(a))


def _shape(ext) -> str:
    return "(" + ", ".join(str(e) for e in ext) + ")"
