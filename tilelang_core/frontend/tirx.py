"""TVM's scalar constructors as TileLang helpers call them inside kernels (`tirx.const(14, T.uint16)`,
`tirx.reinterpret(T.float16, x)`, `tirx.Select(c, a, b)`, from `from tvm import tirx` or `tilelang.tvm`):
each call is rewritten to the T builtin that means the same, with TVM's argument order turned into TileLang's.
"""
from __future__ import annotations

import ast

from .values import BuiltinRef

_SAME_ORDER = {"Select": "T.Select", "if_then_else": "T.if_then_else", "Min": "T.min", "Max": "T.max",
               "min": "T.min", "max": "T.max", "const": "T.cast"}  # const(value, dtype) = cast(value, dtype)
_DTYPE_FIRST = {"Cast": "T.cast", "reinterpret": "T.reinterpret"}  # (dtype, value) -> (value, dtype)


def tirx_call(ref: BuiltinRef, node: ast.Call) -> tuple[BuiltinRef, ast.Call]:
    """The T builtin and call node equivalent to a `tvm.tirx.<name>(...)` call (unchanged when unknown)."""
    short = ref.short
    args = list(node.args)
    if short in _DTYPE_FIRST and len(args) == 2:
        args = [args[1], args[0]]
    elif short == "const" and len(args) == 1 and not node.keywords:
        literal = args[0].value if isinstance(args[0], ast.Constant) else 0.0
        args.append(ast.Constant("int32" if isinstance(literal, int) else "float32"))
    name = _SAME_ORDER.get(short) or _DTYPE_FIRST.get(short)
    if name is None:
        return ref, node
    return BuiltinRef(name), ast.copy_location(ast.Call(node.func, args, node.keywords), node)
