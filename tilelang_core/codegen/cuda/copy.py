"""CUDA lowering of T.copy: thread-strided 16-byte vectors, cp.async inside pipelines, fragments by layout, bounds
guards (its operands as `copy_sides.Side`s)."""
from __future__ import annotations

import math
from contextlib import ExitStack

from ...ir import nodes as N
from ...ir.arith import as_int, shape_ints
from ...ir.copy_extent import loop_extents
from ...passes.layout_kinds import Generic, Replicated, in_fragment, ravel
from .common import LoweringError, all_of, nbytes
from .copy_sides import Side, match_tiles


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


def _part_of(frag: Side, shape: list) -> list | None:
    """(start, extent) per dim when a fragment side is a static slice on every dim that is not the whole
    fragment (`acc[:4, :]`, `acc[:, 64:128]`); None for the whole fragment or any other region."""
    if len(frag.axes) != len(shape) or not all(a.sliced for a in frag.axes):
        return None
    part = [(as_int(a.start), as_int(a.extent)) for a in frag.axes]
    if any(lo is None or n is None for lo, n in part) or all(p == (0, d) for p, d in zip(part, shape)):
        return None
    return part


class CopyOps:
    """Copy lowering; mixed into TileOps (uses `self.em`, the KernelEmitter)."""

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
        store = self.em.roles.ws.store if self.em.roles.ws is not None else None
        if store is not None and store.copy is op:  # the epilogue through shared memory and a TMA store (tma_store)
            return store.emit(self.em)
        src, dst = Side(op.src, op.dst), Side(op.dst, op.src)
        if op.src.kind == "point" and op.dst.kind == "point":
            raise LoweringError("T.copy needs at least one side with a shape", op.span)
        if src.region.kind != "point":
            dst = Side(op.dst, op.src)
        extents = match_tiles(src, dst, op.span)
        sf, df = src.buf.scope == "local.fragment", dst.buf.scope == "local.fragment"
        if sf and df:
            return self._copy_frag_frag(op, src, dst)
        if sf or df:
            return self._copy_frag(op, src, dst, extents, from_frag=sf)
        if "local" in (src.buf.scope, dst.buf.scope) or "local.var" in (src.buf.scope, dst.buf.scope):
            return self._copy_serial(src, dst, extents)
        self._copy_threads(op, src, dst, extents, async_ok)

    def _copy_frag_frag(self, op: N.Copy, src: Side, dst: Side) -> None:
        em = self.em
        ls, ld = em.plan.layouts[src.buf], em.plan.layouts[dst.buf]
        if ls != ld or not (_whole(src) and _whole(dst)):
            return self._copy_frag_remap(src, dst, ls, ld)
        r = em.fresh("r")
        em.line(f"for {r} in T.unroll({ls.regs}):")
        with em.block():
            s = f"{em.name(src.buf)}[{r}]"
            if src.buf.dtype != dst.buf.dtype:
                s = f'T.Cast("{dst.buf.dtype}", {s})'
            em.line(f"{em.name(dst.buf)}[{r}] = {s}")

    def _copy_frag_remap(self, src: Side, dst: Side, ls, ld) -> None:
        """A copy between fragments of different layouts or between slices: each thread fills the destination
        registers it holds, reading a replicated source directly and any other source through shared memory."""
        em = self.em
        sshape = list(shape_ints(src.buf.shape))
        if isinstance(ls, Replicated):
            def read(idx):
                return f"{em.name(src.buf)}[{ravel(idx, sshape)}]"
        else:
            stage = em.fresh("frag_stage")
            em.frame.scratch[stage] = (src.buf.dtype, math.prod(sshape))
            em.sync()  # an earlier run of this copy (in a loop) may still be reading the stage
            r = em.fresh("r")
            em.line(f"for {r} in {'T.unroll' if ls.regs <= 256 else 'T.serial'}({ls.regs}):")
            with em.block():
                em.guarded(in_fragment(ls, "tx", r), f"{stage}[{ravel(ls.coords('tx', r), sshape)}] = "
                                                     f"{em.name(src.buf)}[{r}]")
            em.sync()

            def read(idx):
                return f"{stage}[{ravel(idx, sshape)}]"
        r = em.fresh("r")
        em.line(f"for {r} in {'T.unroll' if ld.regs <= 256 else 'T.serial'}({ld.regs}):")
        with em.block():
            conds, tile = in_fragment(ld, "tx", r), []
            for a, c, d in zip(dst.axes, ld.coords("tx", r), shape_ints(dst.buf.shape)):
                st = em.idx(a.start)
                if not a.sliced:
                    conds.append(f"{c} == {st}")
                    continue
                tile.append(c if st == "0" else f"({c} - {st})")
                if st != "0":
                    conds.append(f"{st} <= {c}")
                if st != "0" or as_int(a.extent) != d:
                    conds.append(f"{c} < {st} + {em.idx(a.extent)}")
            val = read(self.index(src, tile))
            if src.buf.dtype != dst.buf.dtype:
                val = f'T.Cast("{dst.buf.dtype}", {val})'
            em.guarded(conds, f"{em.name(dst.buf)}[{r}] = {val}")

    def _copy_frag(self, op, src: Side, dst: Side, extents, from_frag: bool) -> None:
        em = self.em
        frag, other = (src, dst) if from_frag else (dst, src)
        lay = em.plan.layouts[frag.buf]
        tile = [as_int(e) for e in extents]
        shape = list(shape_ints(frag.buf.shape))
        part = _part_of(frag, shape)
        if part is None and any(as_int(a.start) != 0 for a in frag.tile):
            raise LoweringError("copies of a fragment slice are not supported; copy the whole fragment", op.span)
        if part is None and from_frag and _column_pairs(lay, other, tile):
            return self._copy_frag_pairs(frag, other, lay)
        if part is None and self._copy_frag_runs(frag, other, lay, tile, from_frag):
            return
        r = em.fresh("r")
        em.line(f"for {r} in {'T.unroll' if lay.regs <= 256 else 'T.serial'}({lay.regs}):")
        with em.block():
            coords = lay.coords("tx", r)
            conds = []
            if part is not None:  # a slice of the fragment: only its elements, re-based to the slice's origin
                for k, (c, (lo, n)) in enumerate(zip(list(coords), part)):
                    conds += ([f"{lo} <= {c}"] if lo else []) + ([f"{c} < {lo + n}"] if lo + n < shape[k] else [])
                    coords[k] = f"({c} - {lo})" if lo else c
            elif len(coords) != len(tile):
                coords = _reshape_coords(coords, shape, tile)
            idx = self.index(other, coords)
            conds += self.guard(other, idx)
            conds += in_fragment(lay, "tx", r)
            other_t = em.load_text(other.buf, idx)
            reg = f"{em.name(frag.buf)}[{r}]"
            if from_frag:
                val = reg if frag.buf.dtype == other.buf.dtype else f'T.Cast("{other.buf.dtype}", {reg})'
                self.em.guarded(conds, f"{other_t} = {val}")
            else:
                val = other_t if frag.buf.dtype == other.buf.dtype else f'T.Cast("{frag.buf.dtype}", {other_t})'
                if conds:
                    val = f'T.if_then_else({all_of(conds)}, {val}, {em.safe_text(other.buf, frag.buf.dtype)})'
                em.line(f"{reg} = {val}")

    def _copy_frag_runs(self, frag: Side, other: Side, lay, tile: list, from_frag: bool) -> bool:
        """A whole generic fragment whose threads hold runs of consecutive elements (Generic.vec) and a tensor of
        whose rows keep the runs aligned: one vector access of up to 16 bytes per run (TVM splits a
        run the bounds guard cuts into elements); False (nothing emitted) otherwise."""
        em = self.em
        if not (isinstance(lay, Generic) and lay.vec > 1 and other.buf.scope == "global" and len(lay.shape) == len(tile)):
            return False
        lanes = min(lay.vec, max(16 // max(nbytes(frag.buf.dtype), nbytes(other.buf.dtype)), 1))
        last = as_int(other.buf.shape[-1])  # each run starts at a multiple of `lanes` elements of the tensor
        if (lanes < 2 or not other.axes[-1].sliced or last is None or last % lanes
                or divisibility(other.axes[-1].start) % lanes):
            return False
        ro, ri = em.fresh("ro"), em.fresh("ri")
        r = f"({ro} * {lanes} + {ri})"
        idx = self.index(other, lay.coords("tx", r))
        conds = self.guard(other, idx)
        reg, other_t = f"{em.name(frag.buf)}[{r}]", em.load_text(other.buf, idx)
        if from_frag:
            line = f"{other_t} = " + (reg if frag.buf.dtype == other.buf.dtype else f'T.Cast("{other.buf.dtype}", {reg})')
        else:
            val = other_t if frag.buf.dtype == other.buf.dtype else f'T.Cast("{frag.buf.dtype}", {other_t})'
            line = f"{reg} = " + (f'T.if_then_else({all_of(conds)}, {val}, T.Cast("{frag.buf.dtype}", 0))' if conds
                                  else val)
        em.line(f"for {ro} in {'T.unroll' if lay.regs // lanes <= 256 else 'T.serial'}({lay.regs // lanes}):")
        with em.block():
            em.line(f"for {ri} in T.vectorized({lanes}):")
            with em.block():
                em.guarded(conds if from_frag else [], line)
        return True

    def _copy_frag_pairs(self, frag: Side, other: Side, lay) -> None:
        """An mma accumulator into global memory two columns (registers 2r, 2r+1) per vector store."""
        em = self.em
        r, e = em.fresh("r"), em.fresh("e")
        em.line(f"for {r} in {'T.unroll' if lay.regs <= 512 else 'T.serial'}({lay.regs // 2}):")
        with em.block():
            conds = self.guard(other, self.index(other, lay.coords("tx", f"({r} * 2)")))  # even column: both fit
            idx = self.index(other, lay.coords("tx", f"({r} * 2 + {e})"))
            reg = f"{em.name(frag.buf)}[{r} * 2 + {e}]"
            val = reg if frag.buf.dtype == other.buf.dtype else f'T.Cast("{other.buf.dtype}", {reg})'
            with em.under(conds):
                em.line(f"for {e} in T.vectorized(2):")
                with em.block():
                    em.line(f"{em.load_text(other.buf, idx)} = {val}")

    def _copy_serial(self, src: Side, dst: Side, extents) -> None:
        em = self.em
        vs = [em.fresh("i") for _ in extents]
        with ExitStack() as loops:
            for v, e in zip(vs, extents):
                em.line(f"for {v} in T.serial({em.idx(e)}):")
                loops.enter_context(em.block())
            si, di = self.index(src, vs), self.index(dst, vs)
            val = em.load_text(src.buf, si)
            if src.buf.dtype != dst.buf.dtype:
                val = f'T.Cast("{dst.buf.dtype}", {val})'
            src_conds = self.guard(src, si)
            if src_conds:  # outside a global source: its safe value
                val = f"T.if_then_else({all_of(src_conds)}, {val}, {em.safe_text(src.buf, dst.buf.dtype)})"
            self.em.guarded(self.guard(dst, di), f"{em.load_text(dst.buf, di)} = {val}")

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
            with em.under([] if exact else [f"{e} < {total}"]):
                coords = _unravel_text(e, ext_v)
                if v > 1:
                    coords[-1] = f"({coords[-1]} * {v})"
                si, di = self.index(src, coords), self.index(dst, coords)
                conds = self.guard(src, si, v - 1) + self.guard(dst, di, v - 1)
                if use_async:
                    pred = all_of(self.guard(src, si, v - 1)) or "T.bool(True)"
                    em.line(f'T.cuda.func_call("tl::cp_async<{v * nbytes(src.buf.dtype)}>", '
                            f'{em.name(dst.buf)}.ptr_to([{", ".join(em.access(dst.buf, di))}]), '
                            f'{em.name(src.buf)}.ptr_to([{", ".join(em.access(src.buf, si))}]), {pred}, '
                            'source_code="")')
                else:
                    self._vector_body(src, dst, si, di, v, conds)

    def _vector_body(self, src, dst, si, di, v, conds) -> None:
        """dst[di..] = src[si..] for `v` lanes, guarded once per vector; a vector outside a global source reads
        its safe value (T.annotate_safe_value, else 0) and is written where the destination has it."""
        em = self.em
        src_conds, dst_conds = self.guard(src, si, v - 1), self.guard(dst, di, v - 1)
        vec = em.fresh("vec")
        if v > 1:
            si = si[:-1] + [f"({si[-1]} + {vec})"]
            di = di[:-1] + [f"({di[-1]} + {vec})"]
        val = em.load_text(src.buf, si)
        if src.buf.dtype != dst.buf.dtype:
            val = f'T.Cast("{dst.buf.dtype}", {val})'
        target = em.load_text(dst.buf, di)

        def assign(value: str, loop: str = "T.vectorized") -> None:
            if v > 1:
                em.line(f"for {vec} in {loop}({v}):")
                with em.block():
                    em.line(f"{target} = {value}")
            else:
                em.line(f"{target} = {value}")
        if not conds:
            return assign(val)
        with em.under(dst_conds):
            if src_conds:
                em.line(f"if {all_of(src_conds)}:")
                with em.block():
                    assign(val)
                em.line("else:")
                with em.block():
                    # TVM builds fp8 vector constants of at most 4 lanes: fill the lanes one by one
                    assign(em.safe_text(src.buf, dst.buf.dtype), "T.unroll" if dst.buf.dtype.startswith("float8")
                           else "T.vectorized")
            else:
                assign(val)


def _whole(side: Side) -> bool:
    """True when a fragment side covers its whole buffer."""
    return all(a.sliced and as_int(a.start) == 0 and as_int(a.extent) == d
               for a, d in zip(side.axes, shape_ints(side.buf.shape)))


def _column_pairs(lay, other: Side, tile: list) -> bool:
    """Registers 2r and 2r+1 of an mma/wgmma accumulator hold adjacent columns; they can be stored as one vector into
    a global tensor whose rows and tile column start are even (an even column in bounds has its neighbour in too)."""
    from ...passes.layout_kinds import Mma

    if not isinstance(lay, Mma) or lay.transpose or lay.regs % 2 or in_fragment(lay, "tx", "r"):
        return False
    last = as_int(other.buf.shape[-1]) if other.buf.shape else None
    return (other.buf.scope == "global" and len(tile) == 2 == len(other.tile) and other.axes[-1].sliced
            and last is not None and last % 2 == 0 and divisibility(other.axes[-1].start) % 2 == 0)


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
