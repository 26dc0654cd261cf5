"""CUDA lowering of T.reduce_*: quad shuffles on mma accumulator rows, a shared-memory scratch otherwise (any rank)."""
from __future__ import annotations

import math

from ...ir import nodes as N
from ...ir.arith import shape_ints
from ...passes.layout_kinds import Mma, MmaRow, in_fragment, ravel, unravel
from .common import LoweringError

_REDUCE = {"sum": ("+", "0"), "abssum": ("+", "0"), "max": ("max", "-inf"), "absmax": ("max", "0"),
           "min": ("min", "inf"), "bitand": ("&", "~0"), "bitor": ("|", "0"), "bitxor": ("^", "0")}


class ReduceOps:
    """Reduction lowering; mixed into TileOps (uses `self.em`, the KernelEmitter)."""

    def reduce(self, op: N.Reduce) -> None:
        em = self.em
        src, dst = em.layouts.get(op.src.buffer), em.layouts.get(op.dst.buffer)
        if op.op not in _REDUCE:
            raise LoweringError(f"T.reduce_{op.op} is not supported by the CUDA backend yet", op.span)
        if (isinstance(src, Mma) and isinstance(dst, MmaRow) and dst.fits(src) and op.dim == 1
                and acc_dtype(op) == "float32"):
            return self._reduce_quad(op, src)
        self._reduce_shared(op)

    def _combine(self, kind: str, a: str, b: str) -> str:
        return f"({a} {kind} {b})" if kind in ("+", "&", "|", "^") else f"T.{kind}({a}, {b})"

    def _elem(self, op, text: str) -> str:
        t = "float32"
        v = text if op.src.buffer.dtype == t else f'T.Cast("{t}", {text})'
        return f"T.abs({v})" if op.op.startswith("abs") else v

    def _init(self, kind_init: str, t: str = "float32") -> str:
        if not _is_float(t):
            return {"0": f'T.Cast("{t}", 0)', "-inf": f'T.min_value("{t}")', "inf": f'T.max_value("{t}")',
                    "~0": f'T.bitwise_not(T.Cast("{t}", 0))'}[kind_init]
        return {"0": f'T.Cast("{t}", 0)', "-inf": f'-T.infinity("{t}")', "inf": f'T.infinity("{t}")'}[kind_init]

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
        dt, t = op.dst.buffer.dtype, acc_dtype(op)
        if not op.clear:
            old = target if dt == t else f'T.Cast("{t}", {target})'
            value = self._combine(kind, old, value)
        if dt != t:
            value = f'T.Cast("{dt}", {value})'
        em.line(f"{target} = {value}")

    def _scalar(self, hint: str, t: str = "float32") -> str:
        em = self.em
        name = em.fresh(hint)
        em.allocs.append(f'{name} = T.alloc_buffer((1,), "{t}", scope="local")')
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
            stage = em.fresh("red_in")
            em.scratch[stage] = (t, outer * red * inner)
            lay = em.layouts[sbuf]
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
        out = em.fresh("red_out")
        em.scratch[out] = (t, keep)
        acc = self._scalar("red_acc", t)
        with em.spread(keep) as row:
            j = em.fresh("j")
            em.line(f"{acc}[0] = {self._init(init, t)}")
            em.line(f"for {j} in T.serial({red}):")
            with em.block():
                x = read(row, j)
                x = f"T.abs({x})" if op.op.startswith("abs") and not op.src.buffer.dtype.startswith("uint") else x
                em.line(f"{acc}[0] = {self._combine(kind, f'{acc}[0]', x)}")
            em.line(f"{out}[{row}] = {acc}[0]")
        em.sync()
        self._reduce_writeback(op, out, kind, keep)

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
            with em.spread(keep) as row:
                idx = unravel(row, shape_ints(dbuf.shape))
                self._store_reduced(op, em.load_text(dbuf, idx), f"{out}[{row}]", kind)
            em.dirty_w = True
        else:
            raise LoweringError("T.reduce_* needs a fragment or shared-memory destination", op.span)


def _flat(row: str, j: str, red: int, inner: int) -> str:
    """Row-major position of element `j` of output row `row` in the (outer, red, inner) view of the source."""
    if inner == 1:
        return f"({row} * {red} + {j})"
    return f"(({row} // {inner} * {red} + {j}) * {inner} + {row} % {inner})"


def acc_dtype(op) -> str:
    """The dtype a reduction accumulates in: float32 for floats (float64 when one side is), the destination's
    integer type for integers (an integer sum or max in float32 loses every bit past 24)."""
    src, dst = op.src.buffer.dtype, op.dst.buffer.dtype
    if "float64" in (src, dst):
        return "float64"
    if _is_float(src) or _is_float(dst):
        return "float32"
    return dst


def _is_float(dtype: str) -> bool:
    return dtype.startswith(("float", "bfloat"))


def _as(t: str, buf, text: str) -> str:
    return text if buf.dtype == t else f'T.Cast("{t}", {text})'
