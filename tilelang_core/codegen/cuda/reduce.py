"""CUDA lowering of T.reduce_*: quad shuffles on mma accumulator rows, a shared-memory scratch otherwise (any rank)."""
from __future__ import annotations

import math

from ...analysis.reductions import SHUFFLED, acc_dtype
from ...ir import nodes as N
from ...ir.arith import shape_ints
from ...passes.layout_kinds import Generic, Mma, MmaRow, in_fragment, ravel, unravel
from .common import LoweringError
from .expr import infinity_text

_OPCODE = {"+": 0, "max": 1, "min": 2}  # tl::combine's op
_REDUCE = {"sum": ("+", "0"), "abssum": ("+", "0"), "max": ("max", "-inf"), "absmax": ("max", "0"),
           "min": ("min", "inf"), "bitand": ("&", "~0"), "bitor": ("|", "0"), "bitxor": ("^", "0")}


class ReduceOps:
    """Reduction lowering; mixed into TileOps (uses `self.em`, the KernelEmitter)."""

    def reduce(self, op: N.Reduce) -> None:
        em = self.em
        src, dst = em.plan.layouts.get(op.src.buffer), em.plan.layouts.get(op.dst.buffer)
        if op.op not in _REDUCE:
            raise LoweringError(f"T.reduce_{op.op} is not supported by the CUDA backend yet", op.span)
        if (isinstance(src, Mma) and isinstance(dst, MmaRow) and dst.fits(src) and op.dim == 1
                and acc_dtype(op) == "float32" and not op.nan_propagate):  # the quad shuffles drop NaN
            return self._reduce_quad(op, src)
        if self._rows_in_registers(op, src) and not op.nan_propagate:  # the lane shuffles drop NaN too
            return self._reduce_registers(op, src)
        if op.src.buffer.scope in ("local", "local.var"):
            return self._reduce_private(op)
        self._reduce_shared(op)

    def _reduce_private(self, op) -> None:
        """A per-thread buffer (T.alloc_local) into a per-thread destination: each thread folds its own elements."""
        em = self.em
        kind, init = _REDUCE[op.op]
        t, sbuf, dbuf = acc_dtype(op), op.src.buffer, op.dst.buffer
        shape, dshape = shape_ints(sbuf.shape), shape_ints(dbuf.shape)
        if shape is None or dshape is None or not 0 <= op.dim < len(shape) or dbuf.scope not in ("local", "local.var"):
            raise LoweringError(f"T.reduce_* of the per-thread buffer '{sbuf.name}' needs a static shape, a dim inside "
                                "its rank and a per-thread destination (T.alloc_local) on the CUDA backend", op.span)
        outer, red, inner = math.prod(shape[:op.dim]), shape[op.dim], math.prod(shape[op.dim + 1:])
        acc = self._scalar("red_acc", t)
        row, j = em.fresh("row"), em.fresh("j")
        em.line(f"for {row} in T.serial({outer * inner}):")
        with em.block():
            em.line(f"{acc}[0] = {self._init(init, t)}")
            em.line(f"for {j} in T.serial({red}):")
            with em.block():
                x = _as(t, sbuf, em.load_text(sbuf, unravel(_flat(row, j, red, inner), shape)))
                x = f"T.abs({x})" if op.op.startswith("abs") and not sbuf.dtype.startswith("uint") else x
                em.line(f"{acc}[0] = {self._combine(kind, f'{acc}[0]', x, op.nan_propagate)}")
            self._store_reduced(op, em.load_text(dbuf, unravel(row, dshape)), f"{acc}[0]", kind)

    def _combine(self, kind: str, a: str, b: str, nan_propagate: bool = False) -> str:
        """`a` combined with `b` (+ & | ^ as operators; max / min ignore a NaN as fmaxf does; with `nan_propagate` a NaN wins)."""
        if kind in ("+", "&", "|", "^"):
            return f"({a} {kind} {b})"
        if nan_propagate:
            return f"T.if_then_else(T.isnan({b}), {b}, T.if_then_else(T.isnan({a}), {a}, T.{kind}({a}, {b})))"
        return f"T.{kind}({a}, {b})"

    def _elem(self, op, text: str) -> str:
        t = "float32"
        v = text if op.src.buffer.dtype == t else f'T.Cast("{t}", {text})'
        return f"T.abs({v})" if op.op.startswith("abs") else v

    def _init(self, kind_init: str, t: str = "float32") -> str:
        if not _is_float(t):
            return {"0": f'T.Cast("{t}", 0)', "-inf": f'T.min_value("{t}")', "inf": f'T.max_value("{t}")',
                    "~0": f'T.bitwise_not(T.Cast("{t}", 0))'}[kind_init]
        return {"0": f'T.Cast("{t}", 0)', "-inf": infinity_text(t, negative=True), "inf": infinity_text(t)}[kind_init]

    def _reduce_quad(self, op, src: Mma) -> None:
        """Rows of an mma accumulator: each thread folds its registers, the 4 lanes of a quad shuffle; a tile split
        over warps along N then combines the warps' partial rows through a small shared workspace."""
        em = self.em
        kind, init = _REDUCE[op.op]
        acc = self._scalar("red_acc")
        rr, ni, h = em.fresh("rr"), em.fresh("ni"), em.fresh("h")
        s, d = em.name(op.src.buffer), em.name(op.dst.buffer)
        fn = {"+": "tl::quad_sum", "max": "tl::quad_max", "min": "tl::quad_min"}[kind]
        partials = self.workspace("red_warps", "float32", src.wn * src.m) if src.wn > 1 else None
        if partials is not None:
            em.sync()  # the workspace's readers of an earlier reduction are done
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
            if partials is None:
                self._store_reduced(op, f"{d}[{rr}]", f"{acc}[0]", kind)
            else:
                row = MmaRow.of(src).coords("tx", rr)[0]
                em.guarded(["tx % 4 == 0"], f"{partials}[tx // 32 % {src.wn} * {src.m} + {row}] = {acc}[0]")
        if partials is None:
            return
        em.sync()
        em.line(f"for {rr} in T.unroll({src.mi * 2}):")
        with em.block():
            row = MmaRow.of(src).coords("tx", rr)[0]
            total = f"{partials}[{row}]"
            for w in range(1, src.wn):
                total = self._combine(kind, total, f"{partials}[{w * src.m} + {row}]")
            self._store_reduced(op, f"{d}[{rr}]", total, kind)

    def workspace(self, hint: str, dtype: str, elems: int) -> str:
        """A shared scratch buffer of the reductions: one per kind, dtype and thread role, as large as the largest
        use (every reduction starts with a barrier, so the next one never overwrites what is still read)."""
        em = self.em
        spaces = self.__dict__.setdefault("workspaces", {})
        key = (hint, dtype, em.thread_ops.role)
        if key not in spaces:
            spaces[key] = em.fresh(hint)
        name = spaces[key]
        em.frame.scratch[name] = (dtype, max(elems, em.frame.scratch.get(name, (dtype, 0))[1]))
        return name

    def _rows_in_registers(self, op, src) -> bool:
        """True when each row reduced along the last dim of a generic layout lies in whole registers of every thread
        (its length a multiple of the threads, whole warps) in a dtype warps can shuffle."""
        shape = shape_ints(op.src.buffer.shape)
        return (isinstance(src, Generic) and src.exact and src.threads == self.em.threads and src.threads % 32 == 0
                and shape is not None and op.dim == len(shape) - 1 and shape[-1] % (src.threads * src.vec) == 0
                and acc_dtype(op) in SHUFFLED)

    def _reduce_registers(self, op, src: Generic) -> None:
        """Rows that lie in whole registers (`_rows_in_registers`): register r of a thread holds element
        r * threads + tx (in runs of `vec` alike), so registers o * per .. o * per + per - 1 are all of row o. Each
        thread folds them, the warp shuffles, and the warps combine through a rows x warps workspace."""
        em = self.em
        kind, init = _REDUCE[op.op]
        t, sbuf = acc_dtype(op), op.src.buffer
        red = shape_ints(sbuf.shape)[-1]
        keep, per, warps = src.size // red, red // src.threads, src.threads // 32
        em.intrinsic_ops.library()  # tl::lanes_allreduce
        partials = self.workspace("red_warps", t, keep * warps)
        acc = self._scalar("red_acc", t)
        o, q = em.fresh("o"), em.fresh("q")
        em.sync()  # the workspace's readers of an earlier reduction are done
        em.line(f"for {o} in T.serial({keep}):")
        with em.block():
            em.line(f"{acc}[0] = {self._init(init, t)}")
            em.line(f"for {q} in T.unroll({per}):")
            with em.block():
                x = _as(t, sbuf, f"{em.name(sbuf)}[{o} * {per} + {q}]")
                x = f"T.abs({x})" if op.op.startswith("abs") and not sbuf.dtype.startswith("uint") else x
                em.line(f"{acc}[0] = {self._combine(kind, f'{acc}[0]', x)}")
            em.line(f'{acc}[0] = T.call_pure_extern("{t}", "tl::lanes_allreduce", {acc}[0], {_OPCODE[kind]}, 32)')
            em.guarded(["tx % 32 == 0"], f"{partials}[{o} * {warps} + tx // 32] = {acc}[0]")
        em.sync()

        def value(row: str) -> str:
            total = f"{partials}[{row} * {warps}]"
            for w in range(1, warps):
                total = self._combine(kind, total, f"{partials}[{row} * {warps} + {w}]")
            return total
        self._reduce_writeback(op, value, kind, keep)

    def _store_reduced(self, op, target: str, value: str, kind: str) -> None:
        em = self.em
        dt, t = op.dst.buffer.dtype, acc_dtype(op)
        if not op.clear:
            old = target if dt == t else f'T.Cast("{t}", {target})'
            value = self._combine(kind, old, value, op.nan_propagate)
        if dt != t:
            value = f'T.Cast("{dt}", {value})'
        em.line(f"{target} = {value}")

    def _scalar(self, hint: str, t: str = "float32") -> str:
        em = self.em
        name = em.fresh(hint)
        em.frame.allocs.append(f'{name} = T.alloc_buffer((1,), "{t}", scope="local")')
        return name

    def _reduce_shared(self, op) -> None:
        """Any layout and rank: stage the source in shared memory, reduce rows per thread, broadcast back.

        The source is seen as (outer, red, inner) around the reduced dim; output row `o * inner + i` is the
        element of the destination at that row-major position."""
        em = self.em
        kind, init = _REDUCE[op.op]
        sbuf = op.src.buffer
        shape = shape_ints(sbuf.shape)
        if shape is None or not 0 <= op.dim < len(shape):
            raise LoweringError("T.reduce_* on the CUDA backend needs a source with a static shape and a dim inside "
                                "its rank", op.span)
        outer, red, inner = math.prod(shape[:op.dim]), shape[op.dim], math.prod(shape[op.dim + 1:])
        keep = outer * inner
        t = acc_dtype(op)
        em.sync()
        if sbuf.scope == "local.fragment":
            stage = self.workspace("red_in", t, outer * red * inner)
            lay = em.plan.layouts[sbuf]
            r = em.fresh("r")
            em.line(f"for {r} in T.unroll({lay.regs}):")
            with em.block():
                flat = ravel(lay.coords("tx", r), list(shape))
                em.guarded(in_fragment(lay, "tx", r), f"{stage}[{flat}] = {_as(t, sbuf, f'{em.name(sbuf)}[{r}]')}")
            em.sync()
            read = lambda row, j: f"{stage}[{_flat(row, j, red, inner)}]"  # noqa: E731
        elif sbuf.scope in ("shared.dyn", "shared"):
            def read(row, j):
                return _as(t, sbuf, em.load_text(sbuf, unravel(_flat(row, j, red, inner), shape)))
        else:
            raise LoweringError("T.reduce_* needs a fragment or shared-memory source", op.span)
        out = self.workspace("red_out", t, keep)
        acc = self._scalar("red_acc", t)
        with em.spread(keep) as row:
            j = em.fresh("j")
            em.line(f"{acc}[0] = {self._init(init, t)}")
            em.line(f"for {j} in T.serial({red}):")
            with em.block():
                x = read(row, j)
                x = f"T.abs({x})" if op.op.startswith("abs") and not op.src.buffer.dtype.startswith("uint") else x
                em.line(f"{acc}[0] = {self._combine(kind, f'{acc}[0]', x, op.nan_propagate)}")
            em.line(f"{out}[{row}] = {acc}[0]")
        em.sync()
        self._reduce_writeback(op, lambda row: f"{out}[{row}]", kind, keep)

    def _reduce_writeback(self, op, value, kind: str, keep: int) -> None:
        """Store output row `row` (text) of the reduction, `value(row)`, into the destination fragment or tile."""
        em = self.em
        dbuf = op.dst.buffer
        if dbuf.scope == "local.fragment":
            lay = em.plan.layouts[dbuf]
            r = em.fresh("r")
            em.line(f"for {r} in T.unroll({lay.regs}):")
            with em.block():
                flat = ravel(lay.coords("tx", r), list(shape_ints(dbuf.shape)))
                conds = in_fragment(lay, "tx", r)  # a partial last register holds no output row
                with em.under(conds):
                    self._store_reduced(op, f"{em.name(dbuf)}[{r}]", value(flat), kind)
        elif dbuf.scope in ("shared.dyn", "shared"):
            with em.spread(keep) as row:
                idx = unravel(row, shape_ints(dbuf.shape))
                self._store_reduced(op, em.load_text(dbuf, idx), value(row), kind)
            em.barrier_state.touched(reads=False)
        else:
            raise LoweringError("T.reduce_* needs a fragment or shared-memory destination", op.span)


def _flat(row: str, j: str, red: int, inner: int) -> str:
    """Row-major position of element `j` of output row `row` in the (outer, red, inner) view of the source."""
    if inner == 1:
        return f"({row} * {red} + {j})"
    return f"(({row} // {inner} * {red} + {j}) * {inner} + {row} % {inner})"


def _is_float(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat"))


def _as(t: str, buf, text: str) -> str:
    return text if buf.dtype == t else f'T.Cast("{t}", {text})'
