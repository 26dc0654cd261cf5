"""Tile-IR expressions to TVMScript text for the CUDA lowering: dtype inference, casts and intrinsics."""
from __future__ import annotations

from ...ir import nodes as N
from ...ir.arith import as_const, round_float
from ...ir.ieee_folds import ieee_fold_guard
from ...language.dtypes import E4M3_MAX, INFINITY_BITS, dtype_bits
from .fastmath import fast_exp2

_FLOAT_RANK = {"float16": 1, "bfloat16": 1, "float32": 2, "float64": 3}
_UNARY_MATH = {"exp", "exp2", "log", "log2", "log10", "sqrt", "rsqrt", "floor", "ceil", "tanh", "sin", "cos",
               "sigmoid", "erf", "round", "trunc", "log1p", "fabs", "exp10", "tan", "sinh", "cosh", "atan", "asin",
               "acos", "nearbyint"}
_FAST_MATH = {"__exp": "exp", "__exp2": "exp2", "__exp10": "exp10", "__log": "log", "__log2": "log2",
              "__log10": "log10", "__tan": "tan", "__cos": "cos", "__sin": "sin", "fast_exp": "exp", "exp2f": "exp2"}
_BINARY = {"floordiv": "floordiv", "floormod": "floormod", "truncdiv": "truncdiv", "truncmod": "truncmod",
           "shift_left": "shift_left", "shift_right": "shift_right", "bitwise_and": "bitwise_and",
           "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor", "fmod": "fmod", "atan2": "atan2",
           "hypot": "hypot", "copysign": "copysign", "nextafter": "nextafter"}
_FLOAT_BINARY = {"fmod", "atan2", "hypot", "copysign", "nextafter"}
_PREDICATES = {"isnan", "isinf", "isfinite"}


_NARROW_INTS = ("int8", "uint8", "int16", "uint16")
_BIT_CALLS = {"reinterpret", "infinity", "max_value", "min_value"}  # fp8 results that are bits or constants


def is_fp8(dtype: str) -> bool:
    """An 8-bit float (e4m3 / e5m2 families), which CUDA computes with only through float."""
    return dtype.startswith("float8")


def _passes_bits(e) -> bool:
    return isinstance(e, N.Call) and e.name in _BIT_CALLS or isinstance(e, N.UnaryOp) and e.op == "not"


class ExprError(Exception):
    """An expression the CUDA lowering cannot express; carries the span."""

    def __init__(self, message: str, span=None):
        super().__init__(message)
        self.span = span


def promote(a: str, b: str) -> str:
    """Result dtype of a binary op on dtypes a and b (floats win, wider wins)."""
    if a == b:
        return a
    fa, fb = a.startswith(("float", "bfloat")), b.startswith(("float", "bfloat"))
    if fa and not fb:
        return a
    if fb and not fa:
        return b
    if fa and fb:
        return a if _FLOAT_RANK.get(a, 0) >= _FLOAT_RANK.get(b, 0) else b
    if a == "bool":
        return b
    if b == "bool":
        return a
    return a if _bits(a) >= _bits(b) else b


def _bits(dtype: str) -> int:
    return dtype_bits(dtype) or 32


def dtype_of(e) -> str:
    """The dtype of an IR expression."""
    if isinstance(e, N.Const):
        return e.dtype
    if isinstance(e, N.Var):
        return e.dtype
    if isinstance(e, N.Load):
        return e.buffer.dtype
    if isinstance(e, N.Cast):
        return e.dtype
    if isinstance(e, (N.Compare, N.BoolOp)):
        return "bool"
    if isinstance(e, N.UnaryOp):
        return "bool" if e.op == "not" else dtype_of(e.operand)
    if isinstance(e, N.BinOp):
        return promote(dtype_of(e.lhs), dtype_of(e.rhs))
    if isinstance(e, N.Select):
        return promote(dtype_of(e.true_value), dtype_of(e.false_value))
    if isinstance(e, N.Call):
        if e.dtype:
            return e.dtype
        if e.name == "ceildiv":
            return "int64" if any(dtype_of(a) == "int64" for a in e.args) else "int32"
        if e.name in _PREDICATES:
            return "bool"
        types = [dtype_of(a) for a in e.args]
        out = types[0] if types else "float32"
        for t in types[1:]:
            out = promote(out, t)
        return out
    return "int32"


def zero_text(dtype: str) -> str:
    """A zero of `dtype` in TVMScript (through float32 for the narrow float types TVMScript has no literal for)."""
    if dtype == "bool" or dtype in ("float16", "bfloat16", "float32", "float64") or dtype.startswith(("int", "uint")):
        return const_text(0, dtype)
    return f'T.Cast("{dtype}", T.float32(0))'


def infinity_text(dtype: str, negative: bool = False) -> str:
    """±infinity of a float dtype in TVMScript (e4m3 has none: ±448, what satfinite converts ±inf to)."""
    if dtype in INFINITY_BITS:
        store, pos, neg = INFINITY_BITS[dtype]
        return f'T.reinterpret("{dtype}", T.{store}({neg if negative else pos}))'
    if dtype.startswith("float8"):
        return const_text(-E4M3_MAX if negative else E4M3_MAX, dtype)
    return f'{"-" if negative else ""}T.infinity("{dtype}")'


def const_text(value, dtype: str) -> str:
    """A literal of `dtype` in TVMScript."""
    if dtype == "bool":
        return f"T.bool({bool(value)})"
    if dtype.startswith(("float", "bfloat")):
        v = round_float(float(value), dtype)
        if v != v:
            return f'T.Cast("{dtype}", T.float32("nan"))' if dtype != "float32" else 'T.float32("nan")'
        if v in (float("inf"), float("-inf")):
            return infinity_text(dtype, negative=v < 0)
        return f"T.{dtype}({v!r})"
    if dtype == "int32":
        return str(int(value))
    return f"T.{dtype}({int(value)})"


def is_wide(buf) -> bool:
    """True for a tensor with an int64 dimension: its indices are computed in int64."""
    return buf.scope == "global" and any(dtype_of(d) == "int64" for d in buf.shape)


class ExprEmitter:
    """Renders expressions; `load(buf, index_texts, node)` is supplied by the statement emitter."""

    def __init__(self, var_text, load):
        self.var_text = var_text
        self.load = load
        self.intrinsics: list = []  # (ExprEmitter, Call) -> text or None: calls the kernel emitter adds
        self.wide = False  # emitting the index of a tensor with an int64 dimension: integer leaves read as int64

    def emit(self, e, dtype: str | None = None) -> str:
        """Text of `e`, converted to `dtype` when given."""
        have = dtype_of(e)
        if isinstance(e, N.Const) and dtype is not None:
            return const_text(e.value, dtype)
        text = self._emit(e)
        if dtype is not None and dtype != have:
            return f'T.Cast("{dtype}", {text})'
        return text

    def index(self, e) -> str:
        """An index expression (int32)."""
        return self.emit(e, "int32") if dtype_of(e) not in ("int32",) else self._emit(e)

    def index_of(self, buf, e) -> str:
        """An index of `buf`: int32, or for a tensor with an int64 dimension int64 from the leaves up (TileLang
        widens this arithmetic; `bx * 512 + i` would wrap in int32 before a cast of the sum)."""
        if not is_wide(buf):
            return self.index(e)
        saved, self.wide = self.wide, True
        try:
            return self.emit(e, "int64")
        finally:
            self.wide = saved

    def _widened(self, e, text: str) -> str:
        """`text` (of the integer leaf `e`) as int64 inside a wide index."""
        narrow = ("int8", "int16", "int32", "uint8", "uint16", "bool")
        return f'T.Cast("int64", {text})' if self.wide and dtype_of(e) in narrow else text

    def _emit(self, e) -> str:
        if isinstance(e, N.Const):
            return const_text(e.value, e.dtype)
        if isinstance(e, N.Var):
            if e not in self.var_text:
                raise ExprError(f"'{e.name}' is not defined at this point of the kernel", e.span)
            return self._widened(e, self.var_text[e])
        if isinstance(e, N.Load):
            saved, self.wide = self.wide, False  # the loaded tensor's own index has its own width
            try:
                text = self.load(e.buffer, [self.index_of(e.buffer, i) for i in e.indices], e)
            finally:
                self.wide = saved
            return self._widened(e, text)
        if isinstance(e, N.Cast):
            c = as_const(e.value)
            if isinstance(c, (int, float)) and not isinstance(c, bool) and e.dtype in ("float16", "bfloat16"):
                return const_text(c, e.dtype)  # folded here, rounded like the run-time cast
            return f'T.Cast("{e.dtype}", {self._emit(e.value)})'
        if isinstance(e, (N.BinOp, N.UnaryOp, N.Call)) and is_fp8(dtype_of(e)) and not _passes_bits(e):
            return self._through_float(e)
        if isinstance(e, N.BinOp):
            return self._binop(e)
        if isinstance(e, N.Compare):
            t = promote(dtype_of(e.lhs), dtype_of(e.rhs))
            return f"({self.emit(e.lhs, t)} {e.op} {self.emit(e.rhs, t)})"
        if isinstance(e, N.BoolOp):
            fn = "T.And" if e.op == "and" else "T.Or"
            text = self.emit(e.values[0], "bool")
            for v in e.values[1:]:
                text = f"{fn}({text}, {self.emit(v, 'bool')})"
            return text
        if isinstance(e, N.UnaryOp):
            if e.op == "not":
                return f"T.Not({self.emit(e.operand, 'bool')})"
            if e.op == "~":
                return f"T.bitwise_not({self._emit(e.operand)})"
            inf = e.operand
            if isinstance(inf, N.Call) and inf.name == "infinity" and (inf.dtype or "float32").startswith(
                    ("float", "bfloat")):  # `-T.infinity(t)`: a constant (fp8 has no arithmetic to negate with)
                return infinity_text(inf.dtype or "float32", negative=True)
            return f"(-{self._emit(e.operand)})"
        if isinstance(e, N.Select):
            t = dtype_of(e)
            return (f"T.if_then_else({self.emit(e.cond, 'bool')}, {self.emit(e.true_value, t)}, "
                    f"{self.emit(e.false_value, t)})")
        if isinstance(e, N.Call):
            return self._call(e)
        raise ExprError(f"expression {type(e).__name__} is not supported by the CUDA lowering", getattr(e, "span", None))

    def _through_float(self, e) -> str:
        """fp8 arithmetic (`+`, max, min, clamp, math) computed in float32 and rounded back: CUDA's fp8 types have no
        operators (`__nv_fp8_e4m3` + `__nv_fp8_e4m3` does not compile)."""
        t = dtype_of(e)
        wide = lambda x: x if not is_fp8(dtype_of(x)) else N.Cast("float32", x)  # noqa: E731
        if isinstance(e, N.BinOp):
            e = N.BinOp(e.op, wide(e.lhs), wide(e.rhs), e.span)
        elif isinstance(e, N.UnaryOp):
            e = N.UnaryOp(e.op, wide(e.operand), e.span)
        else:
            e = N.Call(e.name, tuple(wide(a) for a in e.args), "float32" if e.dtype else None, e.span)
        return f'T.Cast("{t}", {self._emit(e)})'

    def _binop(self, e) -> str:
        t = dtype_of(e)
        is_float = t.startswith(("float", "bfloat"))
        guard = ieee_fold_guard(e) if is_float else None
        if guard:  # x * 0 or x - x: an opaque __fmul_rn / __fsub_rn, which TVM's simplifier cannot fold to 0
            return self._call(N.Call(guard, (e.lhs, e.rhs), t, e.span))
        a, b = self.emit(e.lhs, t), self.emit(e.rhs, t)
        if e.op in ("+", "-", "*"):
            return f"({a} {e.op} {b})"
        if e.op == "/":
            return f"({a} / {b})" if is_float else f"T.floordiv({a}, {b})"
        if e.op == "//":
            return f"T.floor({a} / {b})" if is_float else f"T.floordiv({a}, {b})"
        if e.op == "%":  # Python's %: the sign of the divisor, on floats too
            return f"({a} - T.floor({a} / {b}) * {b})" if is_float else f"T.floormod({a}, {b})"
        if e.op == "**":
            return f"T.pow({a}, {b})"
        if e.op in ("<<", ">>"):
            fn = "shift_left" if e.op == "<<" else "shift_right"
            if t in _NARROW_INTS:  # C promotes to int: shift in 32 bits, then truncate to the operand's width
                return f'T.Cast("{t}", T.{fn}(T.Cast("int32", {a}), T.Cast("int32", {b})))'
            return f"T.{fn}({a}, {b})"
        if e.op in ("&", "|", "^"):
            return f"({a} {e.op} {b})"
        raise ExprError(f"operator '{e.op}' is not supported by the CUDA lowering", e.span)

    def _call(self, e) -> str:
        name, t = e.name, dtype_of(e)
        args = e.args
        if name == "infinity" and (e.dtype or "float32").startswith(("float", "bfloat")):
            return infinity_text(e.dtype or "float32")
        if name in ("infinity", "max_value", "min_value"):
            dt = e.dtype or "float32"
            return f'T.{name}("{dt}")'
        if name == "ceildiv":
            a, b = ((self.emit(x, "int64") for x in args[:2]) if t == "int64" else
                    (self.index(args[0]), self.index(args[1])))  # an int64 dim's ceildiv in int64
            if isinstance(as_const(args[1]), int) and as_const(args[1]) > 0:
                return f"T.floordiv({a} + {b} - 1, {b})"
            return f"(0 - T.floordiv(0 - {a}, {b}))"  # ceil(a / b) = -floor(-a / b) for a divisor of any sign
        if name in ("max", "min"):
            return f"T.{name}({self.emit(args[0], t)}, {self.emit(args[1], t)})"
        if name == "abs":
            x = self.emit(args[0], t)
            return x if t.startswith("uint") else f"T.abs({x})"  # |x| of an unsigned is x
        if name == "pow" or name in _FLOAT_BINARY and len(args) == 2:
            fn = "pow" if name == "pow" else _BINARY[name]
            w = "float32" if t in ("float16", "bfloat16") else t  # CUDA has no half pow/atan2/copysign/...
            text = f"T.{fn}({self.emit(args[0], w)}, {self.emit(args[1], w)})"
            return text if w == t else f'T.Cast("{t}", {text})'
        if name == "clamp":
            x, lo, hi = (self.emit(a, t) for a in args)
            if t.startswith(("float", "bfloat")):  # fmaxf/fminf drop NaN; clamp keeps it (as torch.clamp)
                nan = f'T.isnan(T.Cast("float32", {x}))' if t in ("float16", "bfloat16") else f"T.isnan({x})"
                return f"T.Select({nan}, {x}, T.min(T.max({x}, {lo}), {hi}))"  # TVM has no 16-bit isnan
            return f"T.min(T.max({x}, {lo}), {hi})"
        if name == "sigmoid":
            x = self.emit(args[0], t)
            one = const_text(1.0, t)
            return f"({one} / ({one} + T.exp(-{x})))"
        if name in _BINARY and len(args) == 2:
            return f"T.{_BINARY[name]}({self.emit(args[0], t)}, {self.emit(args[1], t)})"
        if name == "isfinite" and len(args) == 1 and dtype_of(args[0]).startswith(("float", "bfloat")) \
                and not is_fp8(dtype_of(args[0])):  # CUDA's one exponent test, not TVM's |x| != inf && x == x
            wide = "float64" if dtype_of(args[0]) == "float64" else "float32"
            return f'T.call_pure_extern("bool", "isfinite", {self.emit(args[0], wide)})'
        if name in _PREDICATES and len(args) == 1:
            return f"T.{name}({self._emit(args[0])})"
        if name == "bitwise_not" and len(args) == 1:
            return f"T.bitwise_not({self.emit(args[0], t)})"
        if name == "popcount" and len(args) == 1:
            return f"T.popcount({self._emit(args[0])})"
        if name == "reinterpret" and len(args) == 1:  # the same bits read as `t` (widths must match)
            return f'T.reinterpret("{t}", {self._emit(args[0])})'
        if name == "likely" and len(args) == 1:
            return f"T.likely({self.emit(args[0], 'bool')})"
        name = _FAST_MATH.get(name, name)
        if name == "exp2" and t == "float32" and len(args) == 1 and fast_exp2():
            return f'T.call_pure_extern("float32", "tl::exp2_ftz", {self.emit(args[0], t)})'  # results < 2^-126: 0
        if name in _UNARY_MATH and len(args) == 1:
            fn = "abs" if name == "fabs" else name
            return f"T.{fn}({self.emit(args[0], t)})"
        for extra in self.intrinsics:
            text = extra(self, e)
            if text is not None:
                return text
        raise ExprError(f"T.{name} is not supported by the CUDA lowering yet", e.span)
