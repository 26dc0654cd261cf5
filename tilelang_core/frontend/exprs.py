"""Expressions inside a kernel body: the kernel evaluator (names, loads, builtin calls), tile-op
regions (`A[a:b, :]`, head addresses), extent simplification and dtype inference for IR expressions.
"""
from __future__ import annotations

import ast
import dataclasses
import difflib

from ..ir import nodes as N
from ..ir.arith import as_const
from ..language.dtypes import dtype_bits
from ..language.types import DType, MacroDef
from .consteval import Evaluator, _text, call_value
from .values import POISON, BuiltinRef, LiveFunc, Unknown, UserFunc, is_expr, is_scalar, to_expr

_FORBIDDEN = {
    "Lambda": "a lambda is only allowed as the index function of T.Layout/T.Fragment; use a @T.macro or an expression",
    "ListComp": "list comprehensions are not supported in a kernel; write a T.Parallel/T.serial loop",
    "SetComp": "set comprehensions are not supported in a kernel; write a loop",
    "DictComp": "dict comprehensions are not supported in a kernel; write a loop",
    "GeneratorExp": "generator expressions are not supported in a kernel; write a loop",
    "Yield": "`yield` is not supported in a kernel",
    "YieldFrom": "`yield from` is not supported in a kernel",
    "Await": "`await` is not supported in a kernel",
    "NamedExpr": "`:=` is not supported in a kernel; assign on its own line",
    "Starred": "`*args` unpacking is not supported here",
}


_SPANNED = (N.Const, N.BinOp, N.Compare, N.BoolOp, N.UnaryOp, N.Call, N.Cast, N.Select, N.Load)


_PY_ON_EXPR = {
    abs: lambda e, span: N.Call("abs", (e,), None, span),
    float: lambda e, span: N.Cast("float32", e, span),
    int: lambda e, span: N.Cast("int32", e, span),
    bool: lambda e, span: N.Cast("bool", e, span),
}


class KernelError(Exception):
    """A diagnostic raised while parsing one statement; the parser reports it and moves on."""

    def __init__(self, code: str, message: str, node=None, related=(), span=None, fix=None):
        super().__init__(message)
        self.code, self.message, self.node, self.related, self.span = code, message, node, related, span
        self.fix = fix  # (title, replacement text for the node's span) or None


INT32_MAX = 2**31 - 1


def check_value(e, node, what: str, minimum: int = 1):
    """Reject a constant size/extent/count that no kernel can have (invalid-value); symbolic ones pass."""
    import math

    v = as_const(e) if is_expr(e) else e
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return e
    if isinstance(v, float) and not math.isfinite(v):
        raise KernelError("invalid-value", f"{what} is {v}; it must be a finite integer", node)
    if isinstance(v, float) and not v.is_integer():
        raise KernelError("invalid-value", f"{what} is {v}, not an integer; use `//` or T.ceildiv", node)
    if v < minimum:
        need = "positive" if minimum == 1 else f"at least {minimum}"
        raise KernelError("invalid-value", f"{what} is {int(v)}; it must be {need}", node)
    if v > INT32_MAX:
        raise KernelError("invalid-value", f"{what} is {_big(int(v))}, over int32 (2**31 - 1); use a smaller value",
                          node)
    return e


FLOAT32_MAX = 3.4028234663852886e38


def _check_literal(e, node) -> None:
    """A finite float constant that float32 cannot hold (TVM refuses the literal; on the GPU it would be inf)."""
    import math

    if _beyond_int64(e):
        raise KernelError("invalid-value", f"`{_text(node)}` is an integer beyond 64 bits", node)
    if isinstance(e, N.Const) and e.dtype == "float32" and isinstance(e.value, float) and math.isfinite(e.value) \
            and abs(e.value) > FLOAT32_MAX:
        raise KernelError("invalid-value", f"`{_text(node)}`: {e.value:g} does not fit float32 (largest "
                          "3.4e38); use a smaller value, or T.infinity(T.float32) for infinity", node)


def _beyond_int64(e) -> bool:
    return isinstance(e, N.Const) and isinstance(e.value, int) and not -(2**63) <= e.value < 2**63


def _mentions_symbolic(e) -> bool:
    from ..ir.visitor import walk

    return any(isinstance(n, N.Var) and n.kind == "symbolic" for n in walk(e))


def _check_shift(e: N.BinOp, node) -> None:
    """A shift by a constant amount outside [0, bits of the shifted type) (undefined on the GPU)."""
    amount, bits = as_const(e.rhs), _bits(expr_dtype(e.lhs))
    if isinstance(amount, int) and bits and not 0 <= amount < bits:
        raise KernelError("invalid-value", f"`{_text(node)}` shifts a {bits}-bit value by {amount}; the amount must "
                          f"be in 0..{bits - 1}", node)


def _bits(dtype: str) -> int:
    digits = "".join(ch for ch in dtype if ch.isdigit())
    return int(digits) if dtype.startswith(("int", "uint")) and digits else 0


def _float_bits(dtype: str) -> int:
    return (dtype_bits(dtype) or 0) if dtype.startswith(("float", "bfloat")) else 0


ON_CHIP_MAX = 2**24  # elements: far past any register file, shared memory or local memory per block


def check_elements(what: str, shape, node, limit: int = INT32_MAX) -> None:
    """A buffer whose constant element count overflows the 32-bit indexing of the generated code (or `limit`)."""
    count = 1
    for d in shape:
        v = as_const(d)
        if not isinstance(v, int):
            return
        count *= v
    if count > limit:
        reach = "that 32-bit indexing reaches" if limit == INT32_MAX else "that any on-chip buffer can hold"
        raise KernelError("invalid-value", f"{what} has {count:,} elements, over the {limit:,} {reach}; split it "
                          "or use smaller sizes", node)


def _big(v: int) -> str:
    return f"{v:,}" if v.bit_length() <= 64 else f"about 2**{v.bit_length() - 1}"


class KernelEval(Evaluator):
    """Evaluates kernel-body expressions into IR (or Python values for trace-time constants)."""

    def __init__(self, parser):
        self.p = parser
        self.argparse = {}

    @property
    def env(self):
        """The parser's current scope (macros switch it)."""
        return self.p.env

    @env.setter
    def env(self, value):
        self.p.env = value

    def eval(self, node):
        """The value of an expression; unsupported constructs raise KernelError."""
        kind = type(node).__name__
        if kind in _FORBIDDEN and kind not in ("Starred", "ListComp", "GeneratorExp"):
            raise KernelError("unsupported-syntax", _FORBIDDEN[kind], node)
        v = super().eval(node)
        if type(v) in _SPANNED and v.span is None:
            v = dataclasses.replace(v, span=self.p.span(node))
        return v

    def undefined(self, node):
        """An unbound name: undefined-name with close matches."""
        later = self._assigned_later(node)
        if later is not None:
            raise KernelError("undefined-name", f"`{node.id}` is used before it is assigned (on line "
                              f"{self.p.span(later).line}); move the assignment above this use", node,
                              related=((self.p.span(later), f"`{node.id}` is assigned here"),))
        names = [n for n in self.env.names() if not n.startswith("__")]
        close = difflib.get_close_matches(node.id, names, n=3, cutoff=0.6)
        hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else "; define it before the kernel"
        fix = (f"Change to `{close[0]}`", close[0]) if close else None
        raise KernelError("undefined-name", f"`{node.id}` is not defined{hint}", node, fix=fix)

    def _comprehension(self, node, kind):
        try:
            v = super()._comprehension(node, kind)
        except KernelError:
            v = Unknown("comprehension")
        if isinstance(v, Unknown) and self.p.launch_depth:
            raise KernelError("unsupported-syntax", _FORBIDDEN[type(node).__name__] + " (a comprehension is only "
                              "allowed over a sequence known at compile time)", node)
        return v

    def _assigned_later(self, node):
        """The Name node where the kernel assigns `node.id` after this use, if any."""
        fn = getattr(self.p, "fn_node", None)
        if fn is None or self.p.macro_depth:  # inside an inlined macro, lines belong to another function
            return None
        for n in ast.walk(fn):
            if isinstance(n, ast.Name) and n.id == node.id and isinstance(n.ctx, ast.Store) and \
                    (n.lineno, n.col_offset) > (node.lineno, node.col_offset):
                return n
        return None

    def visit_Name(self, node):
        v = super().visit_Name(node)
        if v is POISON:
            raise KernelError(None, "", node)
        if isinstance(v, Unknown):
            return N.Var(node.id, "int32", "symbolic", self.p.span(node))
        return v

    def operand(self, v):
        """Alloc_var buffers read as their value; other buffers are not scalars."""
        if isinstance(v, N.Buffer):
            if v.scope == "local.var":
                return N.Load(v, (N.Const(0),))
            raise KernelError("bad-arguments", f"buffer `{v.name}` is used as a scalar; index it "
                              f"(`{v.name}[i, ...]`) or pass it to a tile op", None)
        return v

    def visit_BinOp(self, node):
        v = super().visit_BinOp(node)
        if isinstance(v, Unknown) and v.error:
            raise KernelError("invalid-value", f"`{_text(node)}` cannot be computed ({v.error})", node)
        if isinstance(v, N.BinOp) and v.op in ("/", "//", "%") and as_const(v.rhs) == 0:
            raise KernelError("invalid-value", f"`{_text(node)}` divides by zero", node)
        if isinstance(v, N.BinOp) and v.op in ("<<", ">>", "&", "|", "^") and any(
                expr_dtype(x).startswith(("float", "bfloat")) for x in (v.lhs, v.rhs)):
            raise KernelError("bad-arguments", f"`{_text(node)}`: `{v.op}` needs integer operands; cast with "
                              "T.cast(..., \"int32\") or use T.reinterpret for the bits", node)
        if isinstance(v, N.BinOp) and any(_beyond_int64(x) for x in (v.lhs, v.rhs)):
            raise KernelError("invalid-value", f"`{_text(node)}` uses an integer beyond 64 bits", node)
        if isinstance(v, N.BinOp):
            _check_literal(v.lhs, node)
            _check_literal(v.rhs, node)
        if isinstance(v, N.BinOp) and v.op in ("<<", ">>"):
            _check_shift(v, node)
        if isinstance(v, N.BinOp) and v.op == "**" and not expr_dtype(v.lhs).startswith(("float", "bfloat")) \
                and not _mentions_symbolic(v):  # a factory argument the checker does not know is a Python int
            raise KernelError("unsupported-syntax", f"`{_text(node)}`: `**` on an integer value computed at run "
                              "time is not supported in a kernel; multiply explicitly, or use T.pow on floats", node)
        return v

    def visit_Subscript(self, node):
        base = self.eval(node.value)
        if isinstance(base, N.Buffer):
            idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if any(isinstance(i, ast.Slice) for i in idx) and getattr(self, "allow_regions", False):
                return region_of(self.p, node)
            if any(isinstance(i, ast.Slice) for i in idx):
                raise KernelError("bad-arguments", f"a slice of `{base.name}` is only valid as a tile-op operand "
                                  "(T.copy, T.gemm, ...); index single elements here", node)
            indices = tuple(self.index(i) for i in idx)
            check_rank(base, len(indices), node, self.p)
            return N.Load(base, indices, self.p.span(node))
        return super().visit_Subscript(node)

    def visit_Call(self, node):
        if isinstance(node.func, ast.Attribute) and node.func.attr == "astype" and len(node.args) == 1 \
                and is_expr(self.eval(node.func.value)):  # `x.astype(dtype)` on a kernel value: T.cast
            return self.p.cast_to(self.p.dtype_arg(node.args[0], self.eval(node.args[0])), node, node.func.value)
        func = self.eval(node.func)
        if isinstance(func, BuiltinRef):
            return self.p.call_builtin(func, node)
        if isinstance(func, (UserFunc, MacroDef, LiveFunc)):
            return self.p.inline_call(func, node)
        if isinstance(func, DType):
            return self.p.cast_to(str(func), node)
        if isinstance(node.func, ast.Name) and node.func.id == "print" and not self.p.launch_depth:
            return None  # trace-time Python before the launch (eager style)
        if isinstance(node.func, ast.Name) and node.func.id == "print":
            raise KernelError("unsupported-syntax", "`print` runs at trace time, not on the GPU; use T.print(value) "
                              "to print from the kernel", node)
        args, kwargs = self.call_args(node)
        if not callable(func) or isinstance(func, N.Var):  # a value the checker could not evaluate
            return Unknown(_text(node.func))
        args = [self.operand(a) for a in args]
        runtime = [a for a in args if _has_runtime(a)]
        if runtime and func in _PY_ON_EXPR and len(args) == 1 and not kwargs:
            return _PY_ON_EXPR[func](to_expr(args[0]), self.p.span(node))
        value = call_value(func, args, kwargs, ast.unparse(node))
        if runtime and isinstance(value, Unknown):
            name = getattr(func, "__name__", _text(node.func))
            raise KernelError("bad-arguments", f"`{name}(...)` is a Python function run at trace time and cannot take "
                              "a runtime value; use the T.* "
                              "intrinsic (e.g. T.max, T.abs, T.cast)", node)
        return value

    def call_args(self, node):
        """Arguments of a call, with sliced buffer subscripts kept as Regions."""
        saved, self.allow_regions = getattr(self, "allow_regions", False), True
        try:
            return super().call_args(node)
        finally:
            self.allow_regions = saved

    def scalar(self, node) -> N.Expr:
        """Evaluate a node that must be a scalar expression (index, extent, value)."""
        return self.scalar_value(self.eval(node), node)

    def index(self, node) -> N.Expr:
        """An index or slice bound: an integer scalar expression (a float one is reported)."""
        e = self.scalar(node)
        if expr_dtype(e).startswith(("float", "bfloat")):
            raise KernelError("bad-arguments", f"the index `{_text(node)}` is a float; indices must be integers "
                              "(use `//`, or T.cast(..., \"int32\"))", node)
        return e

    def scalar_value(self, value, node) -> N.Expr:
        """An already evaluated value of `node` as a scalar expression (each node is evaluated once)."""
        v = self.operand(value)
        if v is None or isinstance(v, Unknown):
            return N.Var(_text(node), "int32", "symbolic", self.p.span(node))
        e = to_expr(v, self.p.span(node))
        if e is None:
            raise KernelError("bad-arguments", f"`{_text(node)}` is not a scalar value here "
                              f"(got {_describe(v)})", node)
        _check_literal(e, node)
        return e

    def visit_BoolOp(self, node):
        v = super().visit_BoolOp(node)
        if isinstance(v, N.BoolOp) and any(expr_dtype(x) != "bool" and as_const(x) is None and not _mentions_symbolic(x)
                                           for x in v.values):  # an unknown factory value may well be a bool
            raise KernelError("unsupported-syntax", f"`{_text(node)}`: `{v.op}` on a number computed at run time "
                              "picks an operand in Python but is a logical operation in a kernel; compare it "
                              "(`x != 0`) or use T.if_then_else", node)
        return v


def bind_error(exc, call: ast.Call) -> KernelError:
    """A bad-arguments KernelError from a BindError, with a rename fix for a misspelt keyword."""
    import re

    message = str(exc)
    m = re.search(r"has no parameter '(\w+)' \(did you mean '(\w+)'\?\)", message)
    kw = next((k for k in call.keywords if m and k.arg == m.group(1)), None)
    if kw is None:
        return KernelError("bad-arguments", message, call)
    span_node = ast.Name(id=kw.arg, lineno=kw.lineno, col_offset=kw.col_offset, end_lineno=kw.lineno,
                         end_col_offset=kw.col_offset + len(kw.arg))
    return KernelError("bad-arguments", message, span_node, fix=(f"Change to `{m.group(2)}`", m.group(2)))


def _has_runtime(v) -> bool:
    """True when a value depends on something only known while the kernel runs (a load, a loop or block index)."""
    from ..ir.visitor import walk

    if not is_expr(v) or isinstance(v, N.Const):
        return False
    return any(isinstance(n, N.Load) or isinstance(n, N.Var) and n.kind != "symbolic" for n in walk(v))


def check_rank(buf: N.Buffer, n: int, node, parser) -> None:
    """Raise buffer-rank-mismatch when `buf` gets `n` indices but has a different rank."""
    if n != len(buf.shape) and not (buf.scope == "local.var" and n == 1):
        raise KernelError("buffer-rank-mismatch", f"`{buf.name}` has {len(buf.shape)} dimension"
                          f"{'s' if len(buf.shape) != 1 else ''} but is indexed with {n}; give one index per "
                          "dimension", node, related=((buf.span, f"`{buf.name}` declared here"),) if buf.span else ())


def region_of(parser, node) -> N.Region:
    """A tile-op operand: a buffer, a slice `A[a:b, :]`, a head address `A[i, j]`, or a value holding one."""
    span = parser.span(node)
    if isinstance(node, ast.Subscript):
        base = parser.ev.eval(node.value)
        if isinstance(base, N.Buffer):
            idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            check_rank(base, len(idx), node, parser)
            axes = tuple(_axis(parser, i, dim) for i, dim in zip(idx, base.shape))
            kind = "slice" if any(a.sliced for a in axes) else "point"
            return N.Region(base, axes, kind, span)
    v = parser.ev.eval(node)
    return value_region(v, span, node)


def value_region(v, span, node=None) -> N.Region:
    """A Region from a value (Buffer, Region, Load), else a bad-arguments error."""
    if isinstance(v, N.Region):
        return v
    if isinstance(v, N.Buffer):
        return N.Region(v, tuple(N.Axis(N.Const(0), d, True) for d in v.shape), "full", span)
    if isinstance(v, N.Load):
        return N.Region(v.buffer, tuple(N.Axis(i, N.Const(1), False) for i in v.indices), "point", span)
    raise KernelError("bad-arguments", f"`{_text(node)}` is not a buffer or a buffer region (got {_describe(v)}); "
                      "pass a buffer, a slice like `A[0:64, :]` or a head address like `A[i, j]`", node)


def _axis(parser, idx, dim) -> N.Axis:
    if not isinstance(idx, ast.Slice):
        return N.Axis(parser.ev.index(idx), N.Const(1), False)
    if idx.step is not None:
        raise KernelError("bad-arguments", "strided slices are not supported in tile-op operands; "
                          "copy the whole range and index inside a T.Parallel loop", idx)
    start = parser.ev.index(idx.lower) if idx.lower is not None else N.Const(0)
    stop = parser.ev.index(idx.upper) if idx.upper is not None else dim
    return N.Axis(start, difference(stop, start), True)


# ---------------------------------------------------------------------------------------------
# simplification


def difference(a: N.Expr, b: N.Expr) -> N.Expr:
    """a - b, folded to a constant when the two are affine in the same variables (e.g. (i+1)*64 - i*64)."""
    la, lb = linear(a), linear(b)
    if la is not None and lb is not None:
        diff = dict(la)
        for k, c in lb.items():
            diff[k] = diff.get(k, 0) - c
        terms = {k: c for k, c in diff.items() if c != 0}
        if set(terms) <= {None}:
            return N.Const(terms.get(None, 0))
    if isinstance(b, N.Const) and b.value == 0:
        return a
    return N.BinOp("-", a, b)


def linear(e, _depth: int = 0):
    """An affine form {key: coeff} (key None = constant) of an int expression, or None."""
    if _depth > 30:
        return None
    c = as_const(e)
    if isinstance(c, int) and not isinstance(c, bool):
        return {None: c}
    if isinstance(e, N.Var):
        return {("var", id(e)): 1}
    if isinstance(e, N.UnaryOp) and e.op == "-":
        inner = linear(e.operand, _depth + 1)
        return None if inner is None else {k: -v for k, v in inner.items()}
    if isinstance(e, N.BinOp) and e.op in ("+", "-"):
        la, lb = linear(e.lhs, _depth + 1), linear(e.rhs, _depth + 1)
        if la is None or lb is None:
            return None
        sign = 1 if e.op == "+" else -1
        out = dict(la)
        for k, v in lb.items():
            out[k] = out.get(k, 0) + sign * v
        return out
    if isinstance(e, N.BinOp) and e.op == "*":
        for x, y in ((e.lhs, e.rhs), (e.rhs, e.lhs)):
            k = as_const(y)
            if isinstance(k, int) and not isinstance(k, bool):
                inner = linear(x, _depth + 1)
                return None if inner is None else {key: v * k for key, v in inner.items()}
    if isinstance(e, (N.BinOp, N.Call, N.Load)):
        from ..ir.printer import expr_str

        return {("opaque", expr_str(e)): 1}
    return None


def expr_dtype(e, default: str = "int32") -> str:
    """Best-effort dtype of an IR expression."""
    if isinstance(e, (N.Const, N.Var)):
        return e.dtype
    if isinstance(e, N.Load):
        return e.buffer.dtype
    if isinstance(e, N.Cast):
        return e.dtype
    if isinstance(e, (N.Compare, N.BoolOp)) or isinstance(e, N.UnaryOp) and e.op == "not":
        return "bool"
    if isinstance(e, N.UnaryOp):
        return expr_dtype(e.operand, default)
    if isinstance(e, N.Call):
        if e.dtype:
            return e.dtype
        return expr_dtype(e.args[0], default) if e.args else default
    if isinstance(e, N.Select):
        return expr_dtype(e.true_value, default)
    if isinstance(e, N.BinOp):
        a, b = expr_dtype(e.lhs, default), expr_dtype(e.rhs, default)
        if _bits(b) > _bits(a) > 0 and not isinstance(e.rhs, N.Const):  # two integers: the wider wins, as in TIR
            return b
        if _float_bits(b) > _float_bits(a) > 0 and not isinstance(e.rhs, N.Const):  # two floats: likewise
            return b
        if isinstance(e.lhs, N.Const) and not isinstance(e.rhs, N.Const):
            return b if not (a.startswith("float") and not b.startswith(("float", "bfloat"))) else a
        if a.startswith(("float", "bfloat")) or not b.startswith(("float", "bfloat")):
            return a
        return b
    return default


def _describe(v) -> str:
    if isinstance(v, N.Buffer):
        return f"buffer `{v.name}`"
    if isinstance(v, (tuple, list)):
        return "a tuple"
    if isinstance(v, str):
        return f"string {v!r}"
    if isinstance(v, BuiltinRef):
        return f"`{v.name}`"
    if is_expr(v) or is_scalar(v):
        return "a scalar"
    return type(v).__name__


