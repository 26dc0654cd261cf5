"""The kernel evaluator: names, loads, operators and builtin calls in a kernel body, evaluated into IR
(or Python values for trace-time constants).
"""
from __future__ import annotations

import ast
import dataclasses
import difflib

from ..ir import nodes as N
from ..ir.arith import as_const
from ..language.dtypes import dtype_lanes
from ..language.types import DType, MacroDef
from .consteval import Evaluator, call_value
from .expr_info import expr_dtype
from .kernel_errors import KernelError, beyond_int64, check_literal, check_shift, describe
from .node_text import node_text
from .regions import check_rank, region_alias_error, region_of, reject_step
from .values import POISON, BuiltinRef, LiveFunc, LiveLayout, Unknown, UserFunc, is_expr, to_expr

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


def _mentions_symbolic(e) -> bool:
    from ..ir.visitor import walk

    return any(isinstance(n, N.Var) and n.kind == "symbolic" for n in walk(e))


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
        if isinstance(v, Unknown) and not isinstance(v, LiveLayout):  # a host layout stays one (T.annotate_layout)
            return N.Var(node.id, "int32", "symbolic", self.p.span(node))
        return v

    def operand(self, v):
        """Alloc_var buffers read as their value; other buffers are not scalars."""
        if isinstance(v, N.Buffer):
            if v.scope == "local.var":
                return N.Load(v, (N.Const(0),))
            raise KernelError("bad-arguments", f"buffer `{v.name}` is used as a scalar; index it "
                              f"(`{v.name}[i, ...]`) or pass it to a tile op", None)
        if isinstance(v, N.Region):  # a name bound to a slice (`X = S[0:4]`)
            raise KernelError("bad-arguments", f"a region of `{v.buffer.name}` is used as a scalar; it is only valid "
                              f"as a tile-op operand (T.copy, T.gemm, ...); index `{v.buffer.name}` itself", None)
        return v

    def visit_BinOp(self, node):
        v = super().visit_BinOp(node)
        if isinstance(v, Unknown) and v.error:
            raise KernelError("invalid-value", f"`{node_text(node)}` cannot be computed ({v.error})", node)
        if isinstance(v, N.BinOp) and v.op in ("/", "//", "%") and as_const(v.rhs) == 0:
            raise KernelError("invalid-value", f"`{node_text(node)}` divides by zero", node)
        if isinstance(v, N.BinOp) and v.op in ("<<", ">>", "&", "|", "^") and any(
                expr_dtype(x).startswith(("float", "bfloat")) for x in (v.lhs, v.rhs)):
            raise KernelError("bad-arguments", f"`{node_text(node)}`: `{v.op}` needs integer operands; cast with "
                              "T.cast(..., \"int32\") or use T.reinterpret for the bits", node)
        if isinstance(v, N.BinOp) and any(beyond_int64(x) for x in (v.lhs, v.rhs)):
            raise KernelError("invalid-value", f"`{node_text(node)}` uses an integer beyond 64 bits", node)
        if isinstance(v, N.BinOp):
            check_literal(v.lhs, node)
            check_literal(v.rhs, node)
        if isinstance(v, N.BinOp) and v.op in ("<<", ">>"):
            check_shift(v, node)
        if isinstance(v, N.BinOp) and v.op == "**" and not expr_dtype(v.lhs).startswith(("float", "bfloat")) \
                and not _mentions_symbolic(v):  # a factory argument the checker does not know is a Python int
            raise KernelError("unsupported-syntax", f"`{node_text(node)}`: `**` on an integer value computed at run "
                              "time is not supported in a kernel; multiply explicitly, or use T.pow on floats", node)
        return v

    def visit_Subscript(self, node):
        base = self.eval(node.value)
        if isinstance(base, N.Buffer):
            idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            reject_step(self, base, idx, node)
            if any(isinstance(i, ast.Slice) for i in idx) and getattr(self, "allow_regions", False):
                return region_of(self.p, node)
            if any(isinstance(i, ast.Slice) for i in idx):
                raise KernelError("bad-arguments", f"a slice of `{base.name}` is only valid as a tile-op operand "
                                  "(T.copy, T.gemm, ...); index single elements here", node)
            indices = tuple(self.index(i) for i in idx)
            check_rank(base, len(indices), node, self.p)
            return N.Load(base, indices, self.p.span(node))
        if isinstance(base, N.Region):
            raise region_alias_error(base, node)
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
            if len(node.args) > 1:  # `T.float16x2(a, b)` builds a vector: never a cast of `a`
                lanes = dtype_lanes(str(func))
                if lanes > 1:
                    raise KernelError("lowering-unsupported", f"`{node_text(node)}` builds a {func} vector value, and "
                                      "kernels have no vector-typed values yet; keep the lanes in a "
                                      f"T.alloc_local(({lanes},), ...) buffer and index it", node)
                raise KernelError("bad-arguments", f"`{node_text(node)}`: {func}(x) converts one value", node)
            return self.p.cast_to(str(func), node)
        if isinstance(node.func, ast.Name) and node.func.id == "print" and not self.p.launch_depth:
            return None  # trace-time Python before the launch (eager style)
        if isinstance(node.func, ast.Name) and node.func.id == "print":
            raise KernelError("unsupported-syntax", "`print` runs at trace time, not on the GPU; use T.print(value) "
                              "to print from the kernel", node)
        args, kwargs = self.call_args(node)
        if not callable(func) or isinstance(func, N.Var):  # a value the checker could not evaluate
            return Unknown(node_text(node.func))
        args = [self.operand(a) for a in args]
        runtime = [a for a in args if _has_runtime(a)]
        if runtime and func in _PY_ON_EXPR and len(args) == 1 and not kwargs:
            return _PY_ON_EXPR[func](to_expr(args[0]), self.p.span(node))
        value = call_value(func, args, kwargs, ast.unparse(node))
        if runtime and isinstance(value, Unknown):
            name = getattr(func, "__name__", node_text(node.func))
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
            raise KernelError("bad-arguments", f"the index `{node_text(node)}` is a float; indices must be integers "
                              "(use `//`, or T.cast(..., \"int32\"))", node)
        return e

    def scalar_value(self, value, node) -> N.Expr:
        """An already evaluated value of `node` as a scalar expression (each node is evaluated once)."""
        v = self.operand(value)
        if v is None or isinstance(v, Unknown):
            return N.Var(node_text(node), "int32", "symbolic", self.p.span(node))
        e = to_expr(v, self.p.span(node))
        if e is None:
            raise KernelError("bad-arguments", f"`{node_text(node)}` is not a scalar value here "
                              f"(got {describe(v)})", node)
        check_literal(e, node)
        return e

    def visit_BoolOp(self, node):
        v = super().visit_BoolOp(node)
        if isinstance(v, N.BoolOp) and any(expr_dtype(x) != "bool" and as_const(x) is None and not _mentions_symbolic(x)
                                           for x in v.values):  # an unknown factory value may well be a bool
            raise KernelError("unsupported-syntax", f"`{node_text(node)}`: `{v.op}` on a number computed at run time "
                              "picks an operand in Python but is a logical operation in a kernel; compare it "
                              "(`x != 0`) or use T.if_then_else", node)
        return v


def _has_runtime(v) -> bool:
    """True when a value depends on something only known while the kernel runs (a load, a loop or block index)."""
    from ..ir.visitor import walk

    if not is_expr(v) or isinstance(v, N.Const):
        return False
    return any(isinstance(n, N.Load) or isinstance(n, N.Var) and n.kind != "symbolic" for n in walk(v))
