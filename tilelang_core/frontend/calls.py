"""Builtin calls inside a kernel: dispatch of `T.<name>(...)` to the tile-op handlers, opaque calls to
builtins the checks do not model, unknown-builtin / invalid-dtype reporting, casts and macro inlining.
"""
from __future__ import annotations

import ast

from ..ir import nodes as N
from .kernel_errors import KernelError, bind_error
from .memory_order import check_memory_order
from .signatures import bind_call, registry_entry
from .iket import iket_call, is_iket
from .handlers import HANDLERS, NO_BIND
from .macros import inline
from .values import BuiltinRef, Unknown, is_scalar, normalize_dtype, to_expr


class CallsMixin:
    """The KernelParser methods that evaluate builtin calls (see parser.py for the statements)."""

    def call_builtin(self, ref: BuiltinRef, node: ast.Call):
        """Evaluate a call of a TileLang builtin; tile ops emit statements and return None."""
        if ref.name.startswith("tvm.tirx."):
            from .tirx import tirx_call

            ref, node = tirx_call(ref, node)
        if is_iket(ref):  # tilelang.tools.cuda.iket markers (frontend/iket.py)
            return iket_call(self, ref, node)
        if ref.name.startswith(_UNSUPPORTED_APIS) and ref.name not in _PROVIDED_APIS:
            raise KernelError("unsupported-syntax", f"`{ref.name}` is not supported by tilelang_core (TileLang's "
                              "own CUDA/ROCm code emitters and instrumentation); write the kernel with T.gemm, "
                              "T.copy and the other T builtins", node)
        short = ref.short
        if short.startswith("atomic"):
            check_memory_order(self, ref.name, short, node)
        handler = HANDLERS.get(short) if ref.name.startswith(("T.", "tilelang.language")) else None
        if handler is None and (short in ("Layout", "Fragment") or "layout" in ref.name.lower()):
            return Unknown(ref.name)
        dt = normalize_dtype(short) if ref.name.startswith("T.") else None
        if handler is None and dt is not None:
            return self.cast_to(dt, node)
        if handler is None:
            return self.generic_call(ref, node)
        if short in NO_BIND:
            return handler(self, {}, node, short)
        args = list(node.args)
        if any(isinstance(a, ast.Starred) for a in args):
            args = [ast.Constant(v) if not isinstance(v, ast.AST) else v for v in self._expand_star(args)]
        kwargs = {k.arg: k.value for k in node.keywords if k.arg is not None}
        from ..language.builtin import BindError

        try:
            bound = bind_call(ref.name, short, args, kwargs)
        except BindError as exc:
            raise bind_error(exc, node) from None
        return handler(self, bound, node, short)

    def _expand_star(self, args):
        out = []
        for a in args:
            if isinstance(a, ast.Starred):
                v = self.ev.eval(a.value)
                out.extend(_ConstNode(x, a) for x in (v if isinstance(v, (tuple, list)) else [v]))
            else:
                out.append(a)
        return out

    def generic_call(self, ref: BuiltinRef, node: ast.Call):
        """A builtin the parser does not model: known ones become an opaque Call, unknown ones an error."""
        if self.has_catalog and registry_entry(ref.name) is None and not _tolerated(ref):
            from difflib import get_close_matches

            from ..language.registry import registry

            close = get_close_matches(ref.name, list(registry()), n=3, cutoff=0.7)
            hint = f"; did you mean {', '.join(f'`{c}`' for c in close)}?" if close else \
                "; see docs/language.md for the supported builtins"
            fix = None
            if close and isinstance(node.func, ast.Attribute):
                new = f"{ast.unparse(node.func.value)}.{close[0].rsplit('.', 1)[-1]}"
                fix = (f"Change to `{new}`", new)
            raise KernelError("unknown-builtin", f"`{ref.name}` is not a TileLang builtin{hint}", node.func, fix=fix)
        values, kwargs = self.ev.call_args(node)
        if ref.short in ("cdiv", "next_power_of_2"):  # tilelang(.math) integer helpers fold on known ints
            from .constcalls import call_builtin_const

            folded = call_builtin_const(ref, values, kwargs, ref.name)
            if not isinstance(folded, Unknown):
                return folded
        args = []
        for v in values:
            if isinstance(v, N.Region) or isinstance(v, N.Buffer) and v.scope != "local.var":
                continue  # a tile operand (a buffer or a slice of one) of a builtin the checker does not model
            e = to_expr(self.ev.operand(v))
            if e is not None:
                args.append(e)
        return N.Call(ref.short, tuple(args), None, self.span(node))

    def cast_to(self, dtype: str, node: ast.Call, value_node=None):
        """`T.float32(x)` / `T.cast(x, dtype)`: a Cast, folded for Python constants."""
        value_node = value_node if value_node is not None else (node.args[0] if node.args else None)
        if value_node is None:  # `v = T.int32()`: a variable declared for a later T.let(v, value), as in TVMScript
            return N.Var(getattr(self, "target_name", None) or dtype, dtype, "let", self.span(node))
        v = self.ev.operand(self.ev.eval(value_node))
        if is_scalar(v):
            is_float = dtype.startswith(("float", "bfloat"))
            value = float(v) if is_float else (bool(v) if dtype == "bool" else int(v))
            return N.Const(value, dtype, self.span(node))
        e = to_expr(v, self.span(value_node))
        if e is None:
            raise KernelError("bad-arguments", f"cannot convert `{ast.unparse(value_node)}` to {dtype}", value_node)
        return N.Cast(dtype, e, self.span(node))

    def dtype_arg(self, node, value) -> str:
        """A dtype argument as a canonical dtype name; invalid-dtype when it is not one."""
        if isinstance(value, N.Var) and value.kind == "symbolic" or isinstance(value, Unknown):
            return "unknown"
        dt = normalize_dtype(value)
        if dt is None:
            shown = ast.unparse(node) if isinstance(node, ast.AST) else repr(value)
            from difflib import get_close_matches

            from .values import DTYPES

            written = value.short if isinstance(value, BuiltinRef) else value
            close = get_close_matches(str(written), sorted(DTYPES), n=1) if isinstance(written, str) else []
            hint = f"; did you mean {close[0]!r}?" if close else "; use a dtype such as T.float16 or \"float16\""
            fix = None
            if close and isinstance(node, ast.Constant):
                line = self.ctx.mapper.source.line_text(node.lineno)
                quote = line[node.col_offset] if node.col_offset < len(line) and line[node.col_offset] in "'\"" else "'"
                fix = (f"Change to {quote}{close[0]}{quote}", f"{quote}{close[0]}{quote}")
            elif close and isinstance(node, ast.Attribute):
                fix = (f"Change to `{ast.unparse(node.value)}.{close[0]}`", f"{ast.unparse(node.value)}.{close[0]}")
            raise KernelError("invalid-dtype", f"`{shown}` is not a TileLang dtype{hint}",
                              node if isinstance(node, ast.AST) else None, fix=fix)
        return dt

    def inline_call(self, func, node: ast.Call):
        """Inline a @T.macro (or a plain helper function) at the call site; returns its return value."""
        return inline(self, func, node)


class _ConstNode(ast.Constant):
    """An already-evaluated value standing in for an argument node (from *args expansion)."""

    def __init__(self, value, like):
        super().__init__(value=value)
        ast.copy_location(self, like)


# real-TileLang APIs that emit their own TIR into a kernel (MMA macro emitters, iket tracing, ROCm intrinsics)
_UNSUPPORTED_APIS = ("tilelang.cuda.intrinsics.macro", "tilelang.tools.cuda", "tilelang.rocm")
# provided by compat/ (the JIT builds them; the static check leaves their values unknown)
_PROVIDED_APIS = ("tilelang.cuda.intrinsics.macro.mma_macro_generator.TensorCoreIntrinEmitter",)


def _tolerated(ref: BuiltinRef) -> bool:
    """Builtins of real TileLang the catalog may lack; never reported as unknown."""
    from .known import KNOWN_T

    return ref.short in KNOWN_T or not ref.name.startswith("T.")
