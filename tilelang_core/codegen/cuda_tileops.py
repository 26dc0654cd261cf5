"""CUDA lowering of the tile ops (copy, fill, gemm, reduce, atomic_add) into thread-level TVMScript.

Copies become thread-strided loops of 16-byte vectors (cp.async inside a software pipeline);
gemm calls the ldmatrix + mma.sync templates of `cuda_templates`; reductions use quad shuffles
on mma layouts and a shared-memory scratch otherwise.
"""
from __future__ import annotations

import math

from ..ir import nodes as N
from ..ir.arith import as_int, shape_ints
from ..passes.layouts import Mma, MmaRow, Replicated, ravel
from .cuda_lower import LoweringError, nbytes

_REDUCE = {"sum": ("+", "0"), "abssum": ("+", "0"), "max": ("max", "-inf"), "absmax": ("max", "0"),
           "min": ("min", "inf")}


def op_regions(op) -> tuple[list, list]:
    """(read regions, written regions) of a tile op."""
    if isinstance(op, N.Copy):
        return [op.src], [op.dst]
    if isinstance(op, N.Gemm):
        return [op.a, op.b, op.c], [op.c]
    if isinstance(op, N.Fill):
        return [], [op.dst]
    if isinstance(op, N.Reduce):
        return [op.src] + ([] if op.clear else [op.dst]), [op.dst]
    if isinstance(op, N.CumSum):
        return [op.src], [op.dst]
    if isinstance(op, N.AtomicAdd):
        return ([op.value] if isinstance(op.value, N.Region) else []), [op.dst]
    return [], []


def divisibility(e) -> int:
    """The largest power-of-two-friendly factor `e` is known to be a multiple of (0 -> huge)."""
    if isinstance(e, N.Const):
        v = abs(int(e.value)) if not isinstance(e.value, float) else 1
        return v if v else 1 << 20
    if isinstance(e, N.BinOp):
        a, b = divisibility(e.lhs), divisibility(e.rhs)
        if e.op == "*":
            return a * b
        if e.op in ("+", "-"):
            return math.gcd(a, b)
        if e.op == "<<" and isinstance(e.rhs, N.Const):
            return a << int(e.rhs.value)
    return 1


class Side:
    """One operand of a copy: buffer, axis starts/extents and which axes carry the tile."""

    def __init__(self, region: N.Region, other: N.Region | None = None):
        self.region, self.buf = region, region.buffer
        axes = list(region.axes)
        if not axes:
            axes = [N.Axis(N.Const(0), d, True) for d in self.buf.shape]
        if region.kind == "point" and other is not None:
            tile = [a.extent for a in _tile_axes(other)]
            k = len(tile)
            axes = axes[:-k] + [N.Axis(a.start, ext, True) for a, ext in zip(axes[-k:], tile)] if k else axes
            axes = [a if i >= len(axes) - k else N.Axis(a.start, N.Const(1), False) for i, a in enumerate(axes)]
        self.axes = axes

    @property
    def tile(self) -> list:
        return [a for a in self.axes if a.sliced]


def _tile_axes(region: N.Region) -> list:
    axes = list(region.axes) or [N.Axis(N.Const(0), d, True) for d in region.buffer.shape]
    return [a for a in axes if a.sliced]


def _match(src: Side, dst: Side, span) -> list:
    """The common tile extents of two sides (drops unit axes when ranks differ)."""
    a, b = src.tile, dst.tile
    if len(a) != len(b):
        a2 = [x for x in a if as_int(x.extent) != 1]
        b2 = [x for x in b if as_int(x.extent) != 1]
        if len(a2) != len(b2):
            raise LoweringError("T.copy operands have different tile ranks; slice both sides to the same shape", span)
        for side, keep in ((src, a2), (dst, b2)):
            side.axes = [x if (not x.sliced or x in keep) else N.Axis(x.start, x.extent, False) for x in side.axes]
        a, b = a2, b2
    for x, y in zip(a, b):
        ex, ey = as_int(x.extent), as_int(y.extent)
        if ex is not None and ey is not None and ex != ey:
            raise LoweringError(f"T.copy extents differ ({ex} vs {ey}); both sides must have the same tile shape", span)
    return [x.extent if as_int(x.extent) is not None else y.extent for x, y in zip(a, b)]


class TileOps:
    """Emits tile ops through a KernelEmitter `em`."""

    def __init__(self, em):
        self.em = em

    def emit(self, op) -> None:
        if isinstance(op, N.Copy):
            self.copy(op)
        elif isinstance(op, N.Fill):
            self.fill(op)
        elif isinstance(op, N.Gemm):
            self.gemm(op)
        elif isinstance(op, N.Reduce):
            self.reduce(op)
        elif isinstance(op, N.AtomicAdd):
            self.atomic_add(op)
        else:
            raise LoweringError(f"T.{type(op).__name__.lower()} is not supported by the CUDA backend yet", op.span)

    # ------------------------------------------------------------------ helpers
    def index(self, side: Side, coords: list[str]) -> list[str]:
        """Buffer index of tile coordinates on one side."""
        em, out, k = self.em, [], 0
        for a in side.axes:
            st = em.idx(a.start)
            if a.sliced:
                out.append(coords[k] if st == "0" else f"({st} + {coords[k]})")
                k += 1
            else:
                out.append(st)
        return out

    def guard(self, side: Side, idx: list[str], last_extra: int = 0) -> list[str]:
        """Bounds conditions for a global-memory side (empty for on-chip buffers)."""
        if side.buf.scope != "global":
            return []
        conds = []
        for k, (i, d) in enumerate(zip(idx, side.buf.shape)):
            extra = f" + {last_extra}" if k == len(idx) - 1 and last_extra else ""
            conds.append(f"{i}{extra} < {self.em.idx(d)}")
        return conds

    def vector_width(self, src: Side, dst: Side, extents) -> int:
        """Elements per vector access (16 bytes at most) both sides' alignment allows."""
        if src.buf.dtype != dst.buf.dtype or src.buf.scope == "local.fragment":
            return 1
        inner = as_int(extents[-1]) if extents else None
        if inner is None:
            return 1
        v = 16 // nbytes(src.buf.dtype)
        for side in (src, dst):
            if not side.axes or not side.axes[-1].sliced:
                return 1
            last = as_int(side.buf.shape[-1])
            if last is None:
                return 1
            while v > 1 and (last % v or divisibility(side.axes[-1].start) % v):
                v //= 2
        while v > 1 and inner % v:
            v //= 2
        return max(v, 1)

    # ------------------------------------------------------------------ copy
    def copy(self, op: N.Copy, async_ok: bool = False) -> None:
        src, dst = Side(op.src, op.dst), Side(op.dst, op.src)
        if op.src.kind == "point" and op.dst.kind == "point":
            raise LoweringError("T.copy needs at least one side with a shape", op.span)
        if src.region.kind != "point":
            dst = Side(op.dst, op.src)
        extents = _match(src, dst, op.span)
        sf, df = src.buf.scope == "local.fragment", dst.buf.scope == "local.fragment"
        if sf and df:
            return self._copy_frag_frag(op)
        if sf or df:
            return self._copy_frag(op, src, dst, extents, from_frag=sf)
        if "local" in (src.buf.scope, dst.buf.scope) or "local.var" in (src.buf.scope, dst.buf.scope):
            return self._copy_serial(src, dst, extents)
        self._copy_threads(op, src, dst, extents, async_ok)

    def _copy_frag_frag(self, op: N.Copy) -> None:
        em = self.em
        ls, ld = em.layouts[op.src.buffer], em.layouts[op.dst.buffer]
        if ls != ld:
            raise LoweringError(f"T.copy between fragments '{op.src.buffer.name}' and '{op.dst.buffer.name}' "
                                "with different layouts is not supported", op.span, "layout-inference-failed")
        r = em.fresh("r")
        em.line(f"for {r} in T.unroll({ls.regs}):")
        with em.block():
            s = f"{em.name(op.src.buffer)}[{r}]"
            if op.src.buffer.dtype != op.dst.buffer.dtype:
                s = f'T.Cast("{op.dst.buffer.dtype}", {s})'
            em.line(f"{em.name(op.dst.buffer)}[{r}] = {s}")

    def _copy_frag(self, op, src: Side, dst: Side, extents, from_frag: bool) -> None:
        em = self.em
        frag, other = (src, dst) if from_frag else (dst, src)
        lay = em.layouts[frag.buf]
        tile = [as_int(e) for e in extents]
        if any(as_int(a.start) != 0 for a in frag.tile):
            raise LoweringError("copies of a fragment slice are not supported; copy the whole fragment", op.span)
        r = em.fresh("r")
        em.line(f"for {r} in {'T.unroll' if lay.regs <= 256 else 'T.serial'}({lay.regs}):")
        with em.block():
            coords = lay.coords("tx", r)
            shape = list(shape_ints(frag.buf.shape))
            if len(coords) != len(tile):
                coords = _reshape_coords(coords, shape, tile)
            idx = self.index(other, coords)
            conds = self.guard(other, idx)
            if getattr(lay, "exact", True) is False:
                conds.append(f"{lay.flat('tx', r)} < {lay.size}")
            other_t = em.load_text(other.buf, idx)
            reg = f"{em.name(frag.buf)}[{r}]"
            if from_frag:
                val = reg if frag.buf.dtype == other.buf.dtype else f'T.Cast("{other.buf.dtype}", {reg})'
                self._guarded(conds, f"{other_t} = {val}")
            else:
                val = other_t if frag.buf.dtype == other.buf.dtype else f'T.Cast("{frag.buf.dtype}", {other_t})'
                if conds:
                    val = f'T.if_then_else({" and ".join(conds) if False else _and(conds)}, {val}, T.Cast("{frag.buf.dtype}", 0))'
                em.line(f"{reg} = {val}")

    def _guarded(self, conds: list[str], line: str) -> None:
        em = self.em
        if conds:
            em.line(f"if {_and(conds)}:")
            with em.block():
                em.line(line)
        else:
            em.line(line)

    def _copy_serial(self, src: Side, dst: Side, extents) -> None:
        em = self.em
        vs = [em.fresh("i") for _ in extents]
        for v, e in zip(vs, extents):
            em.line(f"for {v} in T.serial({em.idx(e)}):")
            em.depth += 1
        si, di = self.index(src, vs), self.index(dst, vs)
        val = em.load_text(src.buf, si)
        if src.buf.dtype != dst.buf.dtype:
            val = f'T.Cast("{dst.buf.dtype}", {val})'
        conds = self.guard(src, si) + self.guard(dst, di)
        self._guarded(conds, f"{em.load_text(dst.buf, di)} = {val}")
        em.depth -= len(vs)

    def _copy_threads(self, op, src: Side, dst: Side, extents, async_ok: bool) -> None:
        em, T = self.em, self.em.threads
        v = self.vector_width(src, dst, extents)
        use_async = (async_ok and src.buf.scope == "global" and dst.buf.scope in ("shared.dyn", "shared")
                     and v * nbytes(src.buf.dtype) in (4, 8, 16) and src.buf.dtype == dst.buf.dtype)
        ext_t = [em.idx(e) for e in extents]
        ext_v = ext_t[:-1] + [f"{as_int(extents[-1]) // v}" if v > 1 else ext_t[-1]]
        total = " * ".join(f"({e})" for e in ext_v)
        static_total = None
        if all(as_int(e) is not None for e in extents):
            static_total = 1
            for e in extents:
                static_total *= as_int(e)
            static_total //= v
        it = em.fresh("it")
        n_it = f"{-(-static_total // T)}" if static_total is not None else f"T.floordiv({total} + {T - 1}, {T})"
        loop = "T.unroll" if static_total is not None and -(-static_total // T) <= 16 else "T.serial"
        em.line(f"for {it} in {loop}({n_it}):")
        with em.block():
            e = f"({it} * {T} + tx)"
            exact = static_total is not None and static_total % T == 0
            if not exact:
                em.line(f"if {e} < {total}:")
                em.depth += 1
            coords = _unravel_text(e, ext_v)
            if v > 1:
                coords[-1] = f"({coords[-1]} * {v})"
            si, di = self.index(src, coords), self.index(dst, coords)
            conds = self.guard(src, si, v - 1) + self.guard(dst, di, v - 1)
            if use_async:
                pred = _and(self.guard(src, si, v - 1)) or "T.bool(True)"
                em.line(f'T.cuda.func_call("tl::cp_async<{v * nbytes(src.buf.dtype)}>", '
                        f'{em.name(dst.buf)}.ptr_to([{", ".join(em.access(dst.buf, di))}]), '
                        f'{em.name(src.buf)}.ptr_to([{", ".join(em.access(src.buf, si))}]), {pred}, source_code="")')
            else:
                self._vector_body(src, dst, si, di, v, conds)
            if not exact:
                em.depth -= 1

    def _vector_body(self, src, dst, si, di, v, conds) -> None:
        em = self.em
        vec = em.fresh("vec")
        if v > 1:
            si = si[:-1] + [f"({si[-1]} + {vec})"]
            di = di[:-1] + [f"({di[-1]} + {vec})"]
        val = em.load_text(src.buf, si)
        if src.buf.dtype != dst.buf.dtype:
            val = f'T.Cast("{dst.buf.dtype}", {val})'
        target = em.load_text(dst.buf, di)
        zero_fill = dst.buf.scope != "global" and self.guard(src, si[:0] or si) and conds
        lines = []
        if conds:
            lines.append((f"if {_and(conds)}:", 0))
            lines.append((f"{target} = {val}", 1))
            if zero_fill:
                lines.append(("else:", 0))
                lines.append((f'{target} = T.Cast("{dst.buf.dtype}", 0)', 1))
        else:
            lines.append((f"{target} = {val}", 0))
        if v > 1:
            if conds:  # guard once per vector, vectorise inside each branch
                em.line(f"if {_and(conds)}:")
                with em.block():
                    em.line(f"for {vec} in T.vectorized({v}):")
                    with em.block():
                        em.line(f"{target} = {val}")
                if zero_fill:
                    em.line("else:")
                    with em.block():
                        em.line(f"for {vec} in T.vectorized({v}):")
                        with em.block():
                            em.line(f'{target} = T.Cast("{dst.buf.dtype}", 0)')
                return
            em.line(f"for {vec} in T.vectorized({v}):")
            with em.block():
                em.line(f"{target} = {val}")
            return
        for text, extra in lines:
            em.depth += extra
            em.line(text.replace(f"({vec})", ""))
            em.depth -= extra

    # ------------------------------------------------------------------ fill
    def fill(self, op: N.Fill) -> None:
        em = self.em
        buf = op.dst.buffer
        value = em.emit(op.value, buf.dtype)
        if buf.scope == "local.fragment":
            lay = em.layouts[buf]
            r = em.fresh("r")
            em.line(f"for {r} in T.unroll({lay.regs}):" if lay.regs <= 256 else f"for {r} in T.serial({lay.regs}):")
            with em.block():
                em.line(f"{em.name(buf)}[{r}] = {value}")
            return
        side = Side(op.dst)
        extents = [a.extent for a in side.tile]
        vs = [N.Var(f"f{k}") for k in range(len(extents))]
        body = N.Store(buf, tuple(_side_index_exprs(side, vs)), op.value, span=op.span)
        kind = "serial" if buf.scope in ("local", "local.var") else "parallel"
        loop = N.For(tuple(vs), tuple(N.Const(0) for _ in vs), tuple(extents), kind, body, span=op.span)
        if kind == "parallel":
            em._parallel_distributed(loop)
        else:
            em.serial(loop)

    # ------------------------------------------------------------------ gemm
    def gemm(self, op: N.Gemm) -> None:
        em = self.em
        a, b, c = op.a.buffer, op.b.buffer, op.c.buffer
        lay = em.layouts.get(c)
        if c.scope != "local.fragment" or not isinstance(lay, Mma):
            raise LoweringError("T.gemm needs its accumulator C in a T.alloc_fragment buffer", op.span)
        if b.scope not in ("shared.dyn", "shared"):
            raise LoweringError("T.gemm needs B in shared memory (T.alloc_shared)", op.span)
        m, n = lay.m, lay.n
        bshape = shape_ints(b.shape)
        k = bshape[-1] if op.transpose_b else bshape[-2]
        if k % 16 and a.dtype in ("float16", "bfloat16"):
            raise LoweringError(f"gemm K={k} must be a multiple of 16 for tensor cores", op.span)
        if op.clear_accum:
            self.fill(N.Fill(op.c, N.Const(0.0, c.dtype), True, op.span))
        if id(op) in em.wgmma:
            return self._gemm_wgmma(op, lay, k)
        bp = f"{em.name(b)}.ptr_to([{', '.join(em.access(b, ['0'] * len(b.shape)))}])"
        cp = f"{em.name(c)}.ptr_to([0])"
        tc = a.dtype == b.dtype and a.dtype in ("float16", "bfloat16") and c.dtype == "float32"
        tb, swb = _b(op.transpose_b), _b(b in em.swizzled)
        if a.scope == "local.fragment":
            if not tc or op.transpose_a:
                raise LoweringError("T.gemm with A in registers needs float16/bfloat16 A and B, a float32 "
                                    "accumulator and no transpose_A", op.span)
            call = f"tl::gemm_rs<{m}, {n}, {k}, {lay.wm}, {tb}, {swb}>"
            em.line(f'T.cuda.func_call("{call}", {em.name(a)}.ptr_to([0]), {bp}, {cp}, source_code="")')
            return
        if a.scope not in ("shared.dyn", "shared"):
            raise LoweringError("T.gemm needs A in shared memory or in a fragment", op.span)
        ap = f"{em.name(a)}.ptr_to([{', '.join(em.access(a, ['0'] * len(a.shape)))}])"
        ta, swa = _b(op.transpose_a), _b(a in em.swizzled)
        if tc:
            call = f"tl::gemm_ss<{m}, {n}, {k}, {lay.wm}, {lay.wn}, {ta}, {tb}, {swa}, {swb}>"
        else:
            call = f"tl::gemm_fma<{m}, {n}, {k}, {lay.wm}, {lay.wn}, {ta}, {tb}>"
        em.line(f'T.cuda.func_call("{call}", {ap}, {bp}, {cp}, source_code="")')

    def _gemm_wgmma(self, op: N.Gemm, lay: Mma, k: int) -> None:
        from .cuda_wgmma import gemm_function

        em = self.em
        a, b, c = op.a.buffer, op.b.buffer, op.c.buffer
        name, texts = gemm_function(len(em.extra_cuda), op, lay.m, lay.n, k, em.threads // 128, em.swizzled)
        for t in texts:
            if t not in em.extra_cuda:
                em.extra_cuda.append(t)
        ap = f"{em.name(a)}.ptr_to([0])" if a.scope == "local.fragment" else \
            f"{em.name(a)}.ptr_to([{', '.join(em.access(a, ['0'] * len(a.shape)))}])"
        bp = f"{em.name(b)}.ptr_to([{', '.join(em.access(b, ['0'] * len(b.shape)))}])"
        em.line(f'T.cuda.func_call("{name}", {ap}, {bp}, {em.name(c)}.ptr_to([0]), source_code="")')

    # ------------------------------------------------------------------ reduce
    def reduce(self, op: N.Reduce) -> None:
        em = self.em
        src, dst = em.layouts.get(op.src.buffer), em.layouts.get(op.dst.buffer)
        if op.op not in _REDUCE:
            raise LoweringError(f"T.reduce_{op.op} is not supported by the CUDA backend yet", op.span)
        if isinstance(src, Mma) and isinstance(dst, MmaRow) and dst.fits(src) and op.dim == 1:
            return self._reduce_quad(op, src)
        self._reduce_shared(op)

    def _combine(self, kind: str, a: str, b: str) -> str:
        return f"({a} + {b})" if kind == "+" else f"T.{kind}({a}, {b})"

    def _elem(self, op, text: str) -> str:
        t = "float32"
        v = text if op.src.buffer.dtype == t else f'T.Cast("{t}", {text})'
        return f"T.abs({v})" if op.op.startswith("abs") else v

    def _init(self, kind_init: str) -> str:
        return {"0": "T.float32(0)", "-inf": '-T.infinity("float32")', "inf": 'T.infinity("float32")'}[kind_init]

    def _reduce_quad(self, op, src: Mma) -> None:
        em = self.em
        kind, init = _REDUCE[op.op]
        acc = self._scalar("red_acc")
        rr, ni, h = em.fresh("rr"), em.fresh("ni"), em.fresh("h")
        s, d = em.name(op.src.buffer), em.name(op.dst.buffer)
        fn = {"+": "tl::quad_sum", "max": "tl::quad_max", "min": "tl::quad_min"}[kind]
        em.line(f"for {rr} in T.unroll({src.mi * 2}):")
        with em.block():
            em.line(f"{acc}[0] = {self._init(init)}")
            em.line(f"for {ni} in T.unroll({src.ni}):")
            with em.block():
                em.line(f"for {h} in T.unroll(2):")
                with em.block():
                    x = self._elem(op, f"{s}[({rr} // 2 * {src.ni} + {ni}) * 4 + {rr} % 2 * 2 + {h}]")
                    em.line(f"{acc}[0] = {self._combine(kind, f'{acc}[0]', x)}")
            em.line(f'{acc}[0] = T.cuda.func_call("{fn}", {acc}[0], source_code="", return_type="float32")')
            self._store_reduced(op, f"{d}[{rr}]", f"{acc}[0]", kind)

    def _store_reduced(self, op, target: str, value: str, kind: str) -> None:
        em = self.em
        dt = op.dst.buffer.dtype
        if not op.clear:
            old = target if dt == "float32" else f'T.Cast("float32", {target})'
            value = self._combine(kind, old, value)
        if dt != "float32":
            value = f'T.Cast("{dt}", {value})'
        em.line(f"{target} = {value}")

    def _scalar(self, hint: str) -> str:
        em = self.em
        name = em.fresh(hint)
        em.allocs.append(f'{name} = T.alloc_buffer((1,), "float32", scope="local")')
        return name

    def _reduce_shared(self, op) -> None:
        """Any layout: stage the source in shared memory, reduce rows per thread, broadcast back."""
        em, T = self.em, self.em.threads
        kind, init = _REDUCE[op.op]
        sbuf, dbuf = op.src.buffer, op.dst.buffer
        shape = shape_ints(sbuf.shape)
        if shape is None or len(shape) > 2:
            raise LoweringError("T.reduce_* on the CUDA backend supports static 1-D and 2-D sources", op.span)
        shape2 = shape if len(shape) == 2 else [1, shape[0]]
        dim = op.dim if len(shape) == 2 else 1
        keep, red = (shape2[0], shape2[1]) if dim == 1 else (shape2[1], shape2[0])
        size = shape2[0] * shape2[1]
        em.sync()
        if sbuf.scope == "local.fragment":
            stage = em.fresh("red_in")
            em.scratch[stage] = ("float32", size)
            lay = em.layouts[sbuf]
            r = em.fresh("r")
            em.line(f"for {r} in T.unroll({lay.regs}):")
            with em.block():
                flat = ravel(lay.coords("tx", r), list(shape))
                line = f"{stage}[{flat}] = {self._as_f32(sbuf, f'{em.name(sbuf)}[{r}]')}"
                if getattr(lay, "exact", True) is False:
                    em.line(f"if {lay.flat('tx', r)} < {lay.size}:")
                    with em.block():
                        em.line(line)
                else:
                    em.line(line)
            em.sync()
            read = lambda row, j: f"{stage}[{_flat2(row, j, dim, shape2)}]"  # noqa: E731
        elif sbuf.scope in ("shared.dyn", "shared"):
            def read(row, j):
                idx = _idx2(row, j, dim, shape2, len(shape))
                return self._as_f32(sbuf, em.load_text(sbuf, idx))
        else:
            raise LoweringError("T.reduce_* needs a fragment or shared-memory source", op.span)
        out = em.fresh("red_out")
        em.scratch[out] = ("float32", keep)
        acc = self._scalar("red_acc")
        it, j = em.fresh("it"), em.fresh("j")
        em.line(f"for {it} in T.serial({-(-keep // T)}):")
        with em.block():
            row = f"({it} * {T} + tx)"
            em.line(f"if {row} < {keep}:")
            with em.block():
                em.line(f"{acc}[0] = {self._init(init)}")
                em.line(f"for {j} in T.serial({red}):")
                with em.block():
                    x = read(row, j)
                    x = f"T.abs({x})" if op.op.startswith("abs") else x
                    em.line(f"{acc}[0] = {self._combine(kind, f'{acc}[0]', x)}")
                em.line(f"{out}[{row}] = {acc}[0]")
        em.sync()
        self._reduce_writeback(op, out, kind, keep)

    def _as_f32(self, buf, text: str) -> str:
        return text if buf.dtype == "float32" else f'T.Cast("float32", {text})'

    def _reduce_writeback(self, op, out: str, kind: str, keep: int) -> None:
        em = self.em
        dbuf = op.dst.buffer
        if dbuf.scope == "local.fragment":
            lay = em.layouts[dbuf]
            r = em.fresh("r")
            em.line(f"for {r} in T.unroll({lay.regs}):")
            with em.block():
                flat = ravel(lay.coords("tx", r), list(shape_ints(dbuf.shape)))
                self._store_reduced(op, f"{em.name(dbuf)}[{r}]", f"{out}[{flat}]", kind)
        elif dbuf.scope in ("shared.dyn", "shared"):
            it = em.fresh("it")
            em.line(f"for {it} in T.serial({-(-keep // em.threads)}):")
            with em.block():
                row = f"({it} * {em.threads} + tx)"
                em.line(f"if {row} < {keep}:")
                with em.block():
                    idx = [row] if len(dbuf.shape) == 1 else ([row, "0"] if as_int(dbuf.shape[1]) == 1 else ["0", row])
                    self._store_reduced(op, em.load_text(dbuf, idx), f"{out}[{row}]", kind)
            em.dirty_w = True
        else:
            raise LoweringError("T.reduce_* needs a fragment or shared-memory destination", op.span)

    # ------------------------------------------------------------------ atomics
    def atomic_add(self, op: N.AtomicAdd) -> None:
        em = self.em
        dst = op.dst
        if not isinstance(op.value, N.Region):
            side = Side(dst)
            idx = [em.idx(a.start) for a in side.axes]
            val = em.emit(op.value, dst.buffer.dtype)
            em.line(f'T.cuda.func_call("tl::atomic_add", {em.name(dst.buffer)}.ptr_to([{", ".join(idx)}]), {val}, '
                    'source_code="")')
            return
        src = op.value
        lay = em.layouts.get(src.buffer)
        if src.buffer.scope != "local.fragment" or lay is None or isinstance(lay, (Replicated, MmaRow)):
            raise LoweringError("tile T.atomic_add needs a (non-replicated) fragment source on the CUDA backend",
                                op.span)
        dside = Side(dst, src)
        r = em.fresh("r")
        em.line(f"for {r} in T.unroll({lay.regs}):")
        with em.block():
            idx = self.index(dside, lay.coords("tx", r))
            conds = self.guard(dside, idx)
            val = f"{em.name(src.buffer)}[{r}]"
            if src.buffer.dtype != dst.buffer.dtype:
                val = f'T.Cast("{dst.buffer.dtype}", {val})'
            self._guarded(conds, f'T.cuda.func_call("tl::atomic_add", {em.name(dst.buffer)}.ptr_to([{", ".join(idx)}]), '
                                 f'{val}, source_code="")')


def _and(conds: list[str]) -> str:
    text = conds[0]
    for c in conds[1:]:
        text = f"T.And({text}, {c})"
    return text


def _b(flag: bool) -> str:
    return "true" if flag else "false"


def _unravel_text(e: str, extents: list[str]) -> list[str]:
    coords, stride = [], None
    for ext in reversed(extents):
        base = e if stride is None else f"T.floordiv({e}, {stride})"
        coords.append(f"T.floormod({base}, {ext})" if len(coords) < len(extents) - 1 else base)
        stride = f"({ext})" if stride is None else f"({stride} * {ext})"
    coords.reverse()
    return coords


def _reshape_coords(coords, shape, tile):
    flat = ravel(coords, shape)
    return _unravel_text(flat, [str(t) for t in tile])


def _side_index_exprs(side: Side, vs):
    out, k = [], 0
    for a in side.axes:
        if a.sliced:
            out.append(N.BinOp("+", a.start, vs[k]) if as_int(a.start) != 0 else vs[k])
            k += 1
        else:
            out.append(a.start)
    return out


def _flat2(row: str, j: str, dim: int, shape2) -> str:
    return f"({row} * {shape2[1]} + {j})" if dim == 1 else f"({j} * {shape2[1]} + {row})"


def _idx2(row: str, j: str, dim: int, shape2, rank: int) -> list[str]:
    if rank == 1:
        return [j]
    return [row, j] if dim == 1 else [j, row]
