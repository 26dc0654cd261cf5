"""CUDA lowering of the tile ops (copy, fill, gemm, reduce, atomic_add) into thread-level TVMScript.

Copies become thread-strided loops of 16-byte vectors (cp.async inside a software pipeline);
gemm calls the ldmatrix + mma.sync templates of `templates`; reductions use quad shuffles
on mma layouts and a shared-memory scratch otherwise.
"""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_int, shape_ints
from ...passes.layout_kinds import Mma, MmaRow, Replicated, unravel
from ...passes.wgmma_check import CODE as WGMMA_CODE
from ...passes.wgmma_check import MESSAGE as WGMMA_MESSAGE
from .common import LoweringError, nbytes
from .copy import CopyOps
from .copy_sides import Side
from .reduce import ReduceOps


class TileOps(CopyOps, ReduceOps):
    """Emits tile ops through a KernelEmitter `em`."""

    def __init__(self, em):
        self.em = em

    def emit(self, op) -> None:
        if isinstance(op, N.Copy) and op.src.kind == op.dst.kind == "point":
            self._copy_element(op)
        elif isinstance(op, N.Copy):
            self.copy(op)
        elif isinstance(op, N.Fill):
            self.fill(op)
        elif isinstance(op, N.Gemm):
            self.gemm(op)
        elif isinstance(op, N.Reduce):
            self.reduce(op)
        elif isinstance(op, N.AtomicAdd):
            self.atomic_add(op)
        elif isinstance(op, N.CumSum):
            from .scan import cumsum

            cumsum(self.em, op)
        else:
            raise LoweringError(f"T.{type(op).__name__.lower()} is not supported by the CUDA backend yet", op.span)

    # ------------------------------------------------------------------ fill
    def fill(self, op: N.Fill) -> None:
        em = self.em
        buf = op.dst.buffer
        value = em.emit(op.value, buf.dtype)
        if buf.scope == "local.fragment":
            lay = em.plan.layouts[buf]
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
        if not vs:  # a point region (`T.fill(buf[0], v)`): one element, written by thread 0
            loop = N.For((N.Var("f0"),), (N.Const(0),), (N.Const(1),), kind, body, span=op.span)
        self._elementwise(loop)

    def _elementwise(self, loop: N.For) -> None:
        """A tile op as its element loop: a T.Parallel loop over the threads, or a serial one (per-thread buffers)."""
        em = self.em
        with em.parallel_scope.diverging():  # threads take different iterations: no __syncthreads() inside the loop
            if loop.kind == "parallel":
                em.parallel_distributed(loop)
            else:
                em.serial(loop)

    def _copy_element(self, op: N.Copy) -> None:
        """`T.copy(a[i], b[j])` of one element each side: every thread into its own per-thread destination, else
        one thread (the element converted to the destination's dtype)."""
        src, dst = op.src, op.dst
        value = N.Load(src.buffer, tuple(a.start for a in src.axes), op.span)
        if src.buffer.dtype != dst.buffer.dtype:
            value = N.Cast(dst.buffer.dtype, value)
        body = N.Store(dst.buffer, tuple(a.start for a in dst.axes), value, span=op.span)
        kind = "serial" if dst.buffer.scope in ("local", "local.var") else "parallel"
        self._elementwise(N.For((N.Var("c0"),), (N.Const(0),), (N.Const(1),), kind, body, span=op.span))

    # ------------------------------------------------------------------ gemm
    def gemm(self, op: N.Gemm) -> None:
        em = self.em
        a, b, c = op.a.buffer, op.b.buffer, op.c.buffer
        lay = em.plan.layouts.get(c)
        if c.scope != "local.fragment" or not isinstance(lay, Mma):
            raise LoweringError("T.gemm needs its accumulator C in a T.alloc_fragment buffer", op.span)
        if b.scope not in ("shared.dyn", "shared"):
            raise LoweringError("T.gemm needs B in shared memory (T.alloc_shared)", op.span)
        if op.wgmma and id(op) not in em.plan.wgmma:
            raise LoweringError(WGMMA_MESSAGE, op.span, WGMMA_CODE)  # qualified, but not with the layouts it needs
        m, n = lay.m, lay.n
        bp, brows, bcols, bpart = self._operand(op.b, op, id(op) in em.plan.wgmma)
        k = bcols if op.transpose_b else brows
        if k % 16 and a.dtype in ("float16", "bfloat16"):
            raise LoweringError(f"gemm K={k} must be a multiple of 16 for tensor cores", op.span)
        if isinstance(op.clear_accum, N.Expr):  # a run-time condition
            em.line(f"if {em.emit(op.clear_accum, 'bool')}:")
            with em.block():
                self.fill(N.Fill(op.c, N.Const(0.0, c.dtype), True, op.span))
        elif op.clear_accum:
            self.fill(N.Fill(op.c, N.Const(0.0, c.dtype), True, op.span))
        if id(op) in em.plan.wgmma:
            return self._gemm_wgmma(op, lay, k)
        role = em.thread_ops.role
        if role is not None and role[0] % role[1]:  # the templates number warps threadIdx.x / 32 % warps
            raise LoweringError(f"T.gemm in a thread role of threads {role[0]}..{sum(role) - 1}: an mma.sync gemm "
                                "needs its role to start at a multiple of its thread count; split the role into "
                                "roles of that shape", op.span)
        cp = f"{em.name(c)}.ptr_to([0])"
        tc = a.dtype == b.dtype and (a.dtype in ("float16", "bfloat16") and c.dtype == "float32"
                                     or a.dtype == c.dtype == "float16")  # mma.sync has fp16 accumulators too
        tb, swb = _b(op.transpose_b), _b(b in em.plan.swizzled)
        if a.scope == "local.fragment":
            # a transposed A is the same registers (its layout stores element (m, k) at [k][m])
            if tc:
                call = f"tl::gemm_rs<{m}, {n}, {k}, {lay.wm}, {lay.wn}, {tb}, {swb}{_ld(bpart)}>"
            elif bpart is not None:
                raise _part_error(op.b, bpart, op.span)
            elif b in em.plan.swizzled or k % 8:
                raise LoweringError(f"T.gemm with A in registers of {a.dtype} needs B unswizzled and K a multiple "
                                    "of 8 on the CUDA backend", op.span)
            else:
                call = f"tl::gemm_rs_fma<{m}, {n}, {k}, {lay.wm}, {lay.wn}, {tb}>"
            em.line(f'T.cuda.func_call("{call}", {em.name(a)}.ptr_to([0]), {bp}, {cp}{_at(bpart)}, source_code="")')
            return
        if a.scope not in ("shared.dyn", "shared"):
            raise LoweringError("T.gemm needs A in shared memory or in a fragment", op.span)
        ap, _, _, apart = self._operand(op.a, op, False)
        ta, swa = _b(op.transpose_a), _b(a in em.plan.swizzled)
        if tc:
            lds = "" if apart is bpart is None else _ld(apart or (0, 0, shape_ints(a.shape)[-1])) + _ld(bpart or (
                0, 0, shape_ints(b.shape)[-1]))
            offsets = "" if apart is bpart is None else _at(apart or (0, 0, 0)) + _at(bpart or (0, 0, 0))
            call = f"tl::gemm_ss<{m}, {n}, {k}, {lay.wm}, {lay.wn}, {ta}, {tb}, {swa}, {swb}{lds}>"
        else:
            for region, part in ((op.a, apart), (op.b, bpart)):
                if part is not None:
                    raise _part_error(region, part, op.span)
            call, offsets = f"tl::gemm_fma<{m}, {n}, {k}, {lay.wm}, {lay.wn}, {ta}, {tb}>", ""
        em.line(f'T.cuda.func_call("{call}", {ap}, {bp}, {cp}{offsets}, source_code="")')

    def _gemm_wgmma(self, op: N.Gemm, lay: Mma, k: int) -> None:
        from .wgmma import gemm_function

        em = self.em
        a, c = op.a.buffer, op.c.buffer
        role = em.thread_ops.role
        name, texts = gemm_function(len(em.device_library.snippets), op, lay.m, lay.n, k, em.threads // 128,
                                    em.plan.swizzled, wait=not em.pipeline.wgmma_nowait, first=role[0] if role else 0)
        for t in texts:
            em.device_library.need(t)
        ap = f"{em.name(a)}.ptr_to([0])" if a.scope == "local.fragment" else self._operand(op.a, op, True)[0]
        bp = self._operand(op.b, op, True)[0]
        em.line(f'T.cuda.func_call("{name}", {ap}, {bp}, {em.name(c)}.ptr_to([0]), source_code="")')

    def _operand(self, region: N.Region, op: N.Gemm, wgmma: bool) -> tuple[str, int, int, tuple | None]:
        """(address text, rows, cols, part) of a shared gemm operand: a tile, one matrix of a stacked tile
        (`K_s[stage, :, :]`), or, for wgmma on 128-byte-swizzled atoms, whole 64-column atoms of a tile (the
        descriptors step over atoms of the full tile). For mma.sync another static part of a tile whose columns
        start at a multiple of 8 (`Q_s[:, :256]`) is the whole matrix's address and part = (row, column, stored
        columns), which the templates add to every ldmatrix address. Other parts of a tile: LoweringError."""
        em, buf = self.em, region.buffer
        shape = shape_ints(buf.shape)
        if shape is None or len(shape) < 2:
            raise LoweringError(f"T.gemm needs the shape of '{buf.name}' known at compile time", op.span)
        axes = region.axes if region.kind != "full" and len(region.axes) == len(shape) else ()
        lead = [em.idx(a.start) for a in axes[:-2]] or ["0"] * (len(shape) - 2)
        if any(a.sliced and as_int(a.extent) != 1 for a in axes[:-2]):
            raise LoweringError(f"T.gemm needs a 2-D operand: index the leading axes of '{buf.name}' "
                                "(`tile[stage, :, :]`)", op.span)
        full = region.kind == "point" or not axes
        col = None if full else axes[-1].start  # whole atoms may start at a run-time multiple of 64 (j * 64)
        starts = [0, 0] if full else [as_int(a.start) for a in axes[-2:]]
        exts = list(shape[-2:]) if full else [as_int(a.extent) for a in axes[-2:]]
        w = 128 // nbytes(buf.dtype)  # columns of a 128-byte atom
        if starts[1] is None and _multiple_of(col, w) and wgmma:
            starts[1] = col
        if None in starts or None in exts:
            raise LoweringError(f"T.gemm on a part of '{buf.name}' needs compile-time offsets and extents", op.span)
        whole = starts == [0, 0] and exts == list(shape[-2:])
        atoms = wgmma and em.plan.swizzled.get(buf) == "atoms" and _multiple_of(starts[1], w) and exts[1] % w == 0 \
            and starts[0] % 8 == 0
        if not whole and not atoms:
            part = (starts[0], starts[1], shape[-1])
            if wgmma or starts[1] % 8:
                raise _part_error(region, part + (exts[0], exts[1], shape[-2]), op.span)
            idx = em.access(buf, lead + ["0", "0"])
            return f"{em.name(buf)}.ptr_to([{', '.join(idx)}])", exts[0], exts[1], part
        cols = str(starts[1]) if isinstance(starts[1], int) else em.idx(starts[1])
        idx = em.access(buf, lead + [str(starts[0]), cols])
        return f"{em.name(buf)}.ptr_to([{', '.join(idx)}])", exts[0], exts[1], None

    # ------------------------------------------------------------------ atomics
    def _atomic_add_to_region(self, op: N.AtomicAdd) -> None:
        """`T.atomic_add(region, scalar)`: the scalar added to every element, the elements strided over the threads."""
        em, threads = self.em, self.em.threads
        side = Side(op.dst)
        shape = [as_int(a.extent) for a in side.tile]
        if None in shape:
            raise LoweringError("T.atomic_add of a scalar into a region needs a region of constant extents on the "
                                "CUDA backend; add into each element in a T.Parallel loop instead", op.span)
        total = 1
        for d in shape:
            total *= d
        it = em.fresh("it")
        em.line(f"for {it} in T.serial({-(-total // threads)}):")
        with em.block():
            flat = f"({it} * {threads} + tx)"
            idx = self.index(side, unravel(flat, shape))
            call = (f'T.cuda.func_call("tl::atomic_add", {em.name(side.buf)}.ptr_to([{", ".join(idx)}]), '
                    f'{em.emit(op.value, side.buf.dtype)}, source_code="")')
            em.guarded([f"{flat} < {total}"] + self.guard(side, idx), call)

    def atomic_add(self, op: N.AtomicAdd) -> None:
        em = self.em
        dst = op.dst
        if not isinstance(op.value, N.Region) and dst.kind != "point":
            return self._atomic_add_to_region(op)
        if not isinstance(op.value, N.Region):
            side = Side(dst)
            idx = [em.idx(a.start) for a in side.axes]
            val = em.emit(op.value, dst.buffer.dtype)
            call = f'T.cuda.func_call("tl::atomic_add", {em.name(dst.buffer)}.ptr_to([{", ".join(idx)}]), {val}, ' \
                   'source_code="")'
            owner = em.parallel_scope.owner
            conds = [owner] if owner else []  # one thread per iteration of a replicated loop
            if dst.buffer.scope == "global":  # outside the tensor: skipped (LegalizeSafeMemoryAccess)
                conds += em.global_bounds(dst.buffer, idx)
            self.em.guarded(conds, call)
            return
        src = op.value
        lay = em.plan.layouts.get(src.buffer)
        if src.buffer.scope in ("global", "shared", "shared.dyn", "local"):
            return self._atomic_add_elements(op)
        if src.buffer.scope != "local.fragment" or lay is None:
            raise LoweringError(f"tile T.atomic_add needs a tile source on the CUDA backend ('{src.buffer.name}' is "
                                f"{src.buffer.scope}); add its elements one at a time", op.span)
        dside = Side(dst, src)
        r = em.fresh("r")
        em.line(f"for {r} in T.unroll({lay.regs}):" if lay.regs <= 256 else f"for {r} in T.serial({lay.regs}):")
        with em.block():
            idx = self.index(dside, lay.coords("tx", r))
            conds = self.guard(dside, idx)
            if isinstance(lay, Replicated):  # every thread holds every element: element r is added by one thread
                conds = [f"T.floormod({r}, {em.threads}) == tx", *conds]
            elif isinstance(lay, (Mma, MmaRow)) and lay.one_copy("tx"):  # rows copied over lanes / warps
                conds = [lay.one_copy("tx"), *conds]
            val = f"{em.name(src.buffer)}[{r}]"
            if src.buffer.dtype != dst.buffer.dtype:
                val = f'T.Cast("{dst.buffer.dtype}", {val})'
            self.em.guarded(conds, f'T.cuda.func_call("tl::atomic_add", {em.name(dst.buffer)}.ptr_to([{", ".join(idx)}]), '
                                 f'{val}, source_code="")')

    def _atomic_add_elements(self, op: N.AtomicAdd) -> None:
        """Tile `T.atomic_add(dst, src)` from global, shared or per-thread memory: a T.Parallel loop over the tile
        adding one element at a time, each by one thread (as TileLang lowers it without TMA). use_tma=True (a TMA
        reduce-add; tma_atomic.py refuses what TileLang refuses) adds the same, element by element: no bulk reduction
        is emitted yet."""
        src, dst = Side(op.value, op.dst), Side(op.dst, op.value)
        if [as_int(a.extent) for a in src.tile] != [as_int(a.extent) for a in dst.tile] or None in [
                as_int(a.extent) for a in dst.tile]:
            raise LoweringError("tile T.atomic_add needs source and destination tiles of the same constant shape on "
                                "the CUDA backend; slice both sides to it", op.span)
        vs = [N.Var(f"a{k}") for k in range(len(dst.tile))]
        point = N.Region(dst.buf, tuple(N.Axis(i, N.Const(1), False) for i in _side_index_exprs(dst, vs)), "point",
                         op.span)
        body = N.AtomicAdd(point, N.Load(src.buf, tuple(_side_index_exprs(src, vs)), op.span), op.span)
        self._elementwise(N.For(tuple(vs), tuple(N.Const(0) for _ in vs), tuple(a.extent for a in dst.tile),
                                "parallel", body, span=op.span))

    def atomic_minmax(self, call: N.Call) -> None:
        """T.atomic_max / atomic_min / atomic_or on one element (once per iteration inside a replicated T.Parallel); a
        per-thread buffer is the thread's own, updated in place."""
        em = self.em
        old, value = call.args
        idx = [em.idx(i) for i in old.indices] or ["0"]
        if old.buffer.scope in ("local", "local.var"):
            target, v = em.load_text(old.buffer, idx, old), em.emit(value, old.buffer.dtype)
            new = f"T.bitwise_or({target}, {v})" if call.name == "atomic_or" else f"T.{call.name[7:]}({target}, {v})"
            return em.line(f"{target} = {new}")
        ptr = f"{em.name(old.buffer)}.ptr_to([{', '.join(em.access(old.buffer, idx))}])"
        line = f'T.cuda.func_call("tl::{call.name}", {ptr}, {em.emit(value, old.buffer.dtype)}, source_code="")'
        conds = [em.parallel_scope.owner] if em.parallel_scope.owner else []
        if old.buffer.scope == "global" and old.indices:
            conds += em.global_bounds(old.buffer, idx)
        self.em.guarded(conds, line)


def _multiple_of(e, k: int) -> bool:
    """True when `e` (an int or an expression) is a multiple of `k` for every value of its variables."""
    if isinstance(e, int) or as_int(e) is not None:
        return (e if isinstance(e, int) else as_int(e)) % k == 0
    if isinstance(e, N.BinOp) and e.op == "*":
        return _multiple_of(e.lhs, k) or _multiple_of(e.rhs, k)
    if isinstance(e, N.BinOp) and e.op in ("+", "-"):
        return _multiple_of(e.lhs, k) and _multiple_of(e.rhs, k)
    return False


def _b(flag: bool) -> str:
    return "true" if flag else "false"


def _side_index_exprs(side: Side, vs):
    out, k = [], 0
    for a in side.axes:
        if a.sliced:
            out.append(N.BinOp("+", a.start, vs[k]) if as_int(a.start) != 0 else vs[k])
            k += 1
        else:
            out.append(a.start)
    return out


def _ld(part: tuple | None) -> str:
    """The stored-columns template argument of a tile part (nothing for a whole tile)."""
    return "" if part is None else f", {part[2]}"


def _at(part: tuple | None) -> str:
    """The (row, column) call arguments of a tile part (nothing for a whole tile)."""
    return "" if part is None else f", {part[0]}, {part[1]}"


def _part_error(region: N.Region, part: tuple, span) -> LoweringError:
    """The diagnostic for a part of a shared tile this gemm cannot address."""
    buf = region.buffer
    return LoweringError(f"T.gemm on a part of the shared tile '{buf.name}' (rows from {part[0]}, columns from "
                         f"{part[1]}) is only supported for fp16/bf16 mma.sync gemms with the part's columns starting "
                         "at a multiple of 8, or whole 128-byte atoms (64 columns of fp16) on wgmma; copy that part "
                         "into a tile of its own", span)
