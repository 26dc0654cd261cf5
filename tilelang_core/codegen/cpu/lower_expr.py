"""Tile-IR expressions → TVM tirx expressions for the CPU backend: one method per expression node."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.ieee_folds import ieee_fold_guard
from ..tvm_loader import load
from .expr import LoweringError, as_bool, binary, cast, compare, const, dtype_of, index_expr, int_fits, is_float, match
from .ieee import DTYPES as IEEE_DTYPES
from .ieee import ieee
from .intrinsics import intrinsic

# user CUDA code (frontend/externs.py, frontend/source_kernel.py), by the builtin the user wrote
CUDA_SOURCE_CALLS = {"import_source": "import_source", "call_extern": "call_extern",
                     "cuda_source_kernel": "CUDASourceCodeKernel"}


class Late:
    """A variable's value built when it is read (a per-thread slot indexed by the thread being lowered)."""

    def __init__(self, build):
        self.build = build


class ExprLowerer:
    """Translates tile-IR expressions with a variable map (ir Var → tirx expr or Late) and a buffer map."""

    def __init__(self, vars_: dict, buffers: dict, load_hook=None, call_hook=None):
        self.vars = vars_
        self.buffers = buffers
        self.load_hook = load_hook  # (ir Load, tirx buffer, tirx indices) -> tirx expr
        self.call_hook = call_hook  # (ir Call, tirx args) -> tirx expr, or None for the intrinsic table
        self.view_hook = None  # (ir Buffer with a base, span) -> the tirx buffer sharing the base's storage
        self.wide = False  # lowering the index of a tensor past int32: integer leaves are read as int64

    def indices(self, buffer: N.Buffer, indices) -> list:
        """The tirx indices of an element of `buffer`. A tensor with a 64-bit dimension (a shape past int32) is
        indexed in 64 bits from the leaves up, as TileLang widens its index arithmetic, so `bx * 512 + i` does not
        wrap in int32 first."""
        saved, self.wide = self.wide, self.wide or any(getattr(d, "dtype", None) == "int64" for d in buffer.shape)
        try:
            return [index_expr(self(i)) for i in indices] or [const(0, "int32")]
        finally:
            self.wide = saved

    def _widened(self, x):
        """An integer leaf read inside a 64-bit index: as int64."""
        return cast(x, "int64") if self.wide and dtype_of(x) in ("int8", "int16", "int32", "uint8", "uint16") else x

    def __call__(self, e):
        """Lower one expression."""
        method = getattr(self, "_" + type(e).__name__, None)
        if method is None:
            raise LoweringError(f"{type(e).__name__} expressions are not supported by the CPU backend",
                                getattr(e, "span", None))
        return method(e)

    def _Const(self, e):
        return const(e.value, e.dtype)

    def _Var(self, e):
        if e not in self.vars:
            if e.kind == "thread":
                raise LoweringError(f"thread index '{e.name}' has no meaning on the CPU backend, which runs each "
                                    "block as whole-tile loops; express the work with tile ops or T.Parallel",
                                    e.span)
            if e.kind == "symbolic":
                raise LoweringError(f"'{e.name}' has no value for this kernel instance: it is neither known "
                                    "statically nor a plain dimension of a tensor parameter; give the factory's "
                                    "arguments (e.g. a `# tilelsp: factory(name=value)` comment) or call the kernel "
                                    "through the JIT", e.span)
            raise LoweringError(f"'{e.name}' has no value here (the CPU backend found no binding)", e.span)
        value = self.vars[e]
        return self._widened(value.build() if isinstance(value, Late) else value)

    def _weak_pair(self, lhs, rhs):
        """Lower two operands; a bare literal takes the other side's dtype when the kinds agree."""
        if isinstance(lhs, N.Const) and not isinstance(rhs, N.Const):
            b = self(rhs)
            return self._literal(lhs, dtype_of(b)), b
        a = self(lhs)
        if isinstance(rhs, N.Const) and not isinstance(lhs, N.Const):
            return a, self._literal(rhs, dtype_of(a))
        return a, self(rhs)

    def _literal(self, c: N.Const, other: str):
        if isinstance(c.value, bool) or other == "bool":
            return const(c.value, c.dtype)
        if isinstance(c.value, float) and not is_float(other):
            return const(c.value, c.dtype)
        if isinstance(c.value, int) and not is_float(other) and not int_fits(c.value, other):
            return const(c.value, c.dtype)  # `T.uint64(2**34) + tx`: the literal keeps its type, tx is widened
        return const(c.value, other)

    def _BinOp(self, e):
        a, b = self._weak_pair(e.lhs, e.rhs)
        guard = ieee_fold_guard(e)
        if guard and dtype_of(match(a, b)[0]) in IEEE_DTYPES:  # float x * 0, x - x: computed (NaN for inf / NaN x)
            return ieee(guard, list(match(a, b)), e.span)
        try:
            return binary(e.op, a, b)
        except LoweringError as err:
            raise LoweringError(str(err), e.span) from None

    def _Compare(self, e):
        return compare(e.op, *self._weak_pair(e.lhs, e.rhs))

    def _BoolOp(self, e):
        tirx = load().tirx
        parts = [as_bool(self(v)) for v in e.values]
        out = parts[0]
        for p in parts[1:]:
            out = tirx.And(out, p) if e.op == "and" else tirx.Or(out, p)
        return out

    def _UnaryOp(self, e):
        tirx = load().tirx
        x = self(e.operand)
        if e.op == "-":
            return binary("-", const(0, dtype_of(x)), x)
        if e.op == "not":
            return tirx.Not(as_bool(x))
        return tirx.bitwise_not(x)

    def _Call(self, e):
        if e.name in CUDA_SOURCE_CALLS:
            raise LoweringError(f"T.{CUDA_SOURCE_CALLS[e.name]} runs user CUDA code, which the CPU backend cannot "
                                "compile; build this kernel for a CUDA target, or write the routine with T.* "
                                "operations", e.span)
        args = [self(a) for a in e.args]
        if self.call_hook is not None:
            out = self.call_hook(e, args)
            if out is not None:
                return out
        return intrinsic(e.name, args, e.dtype, e.span)

    def _Cast(self, e):
        return cast(self(e.value), e.dtype)

    def _Select(self, e):
        tirx = load().tirx
        a, b = self._weak_pair(e.true_value, e.false_value)
        a, b = match(a, b)
        return tirx.if_then_else(as_bool(self(e.cond)), a, b)

    def _Load(self, e):
        tirx = load().tirx
        buf = self.buffers.get(e.buffer)
        if buf is None and e.buffer.base is not None and self.view_hook is not None:
            buf = self.view_hook(e.buffer, e.span)
        if buf is None:
            raise LoweringError(f"buffer '{e.buffer.name}' is used outside its allocation", e.span)
        idx = self.indices(e.buffer, e.indices)
        if self.load_hook is not None:
            return self._widened(self.load_hook(e, buf, idx))
        return self._widened(tirx.BufferLoad(buf, idx))
