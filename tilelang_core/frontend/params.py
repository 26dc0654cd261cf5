"""Kernel parameters declared from their annotations: a `T.Tensor(shape, dtype)` is a global Buffer, a dtype a
scalar Var; eager style also declares them in the body (`A: T.Tensor((M, K), dtype)`) and reads `T.const` dims."""
from __future__ import annotations

import ast

from ..ir import nodes as N
from .kernel_errors import INT32_MAX, INT64_MAX, KernelError, check_elements, check_value
from .values import ConstDims, TensorSpec, Unknown, normalize_dtype, to_expr


def declare(p, name: str, ann, ann_node, span):
    """A parameter from its annotation value: a global Buffer for a tensor type, a Var for a dtype."""
    if isinstance(ann, TensorSpec):
        shape = []
        for d in ann.shape:
            e = to_expr(p.ev.operand(d), span) if not isinstance(d, str) else N.Var(d, "int32", "param", span)
            if e is None or isinstance(e, N.Const) and isinstance(e.value, float) and e.value.is_integer():
                raise KernelError("bad-arguments", f"the shape of `{name}` must be integers or T.dynamic dims",
                                  ann_node)
            # the lowering divides by dims; a dimension past int32 makes the tensor's indices 64-bit (as TileLang)
            shape.append(check_value(e, ann_node, f"a shape entry of `{name}`", maximum=INT64_MAX))
        wide = any(getattr(d, "dtype", None) == "int64" for d in shape)
        check_elements(f"tensor `{name}`", shape, ann_node, INT64_MAX if wide else INT32_MAX)
        dtype = "unknown" if ann.dtype == "unknown" else p.dtype_arg(_dtype_node(ann_node), ann.dtype)
        if dtype == "handle":  # a T.ptr table holds addresses: an int64 tensor, as TileLang lowers it
            dtype = "int64"
        return N.Buffer(name, tuple(shape), dtype, ann.scope if ann.scope != "global" else "global", span)
    if isinstance(ann, N.Var) and ann.kind == "symbolic":
        return N.Var(name, "int32", "param", span)
    dt = normalize_dtype(ann) if isinstance(ann, str) else None
    if dt is not None:
        return N.Var(name, dt, "param", span)
    if isinstance(ann, Unknown):
        return N.Var(name, "int32", "param", span)
    raise KernelError("invalid-kernel", f"the annotation of `{name}` is not a tensor type or a dtype; use "
                      f"`T.Tensor((M, N), T.float16)` or `T.int32`", ann_node)


def _dtype_node(ann_node):
    """The dtype argument inside a `T.Tensor(shape, dtype)` / `T.Tensor[shape, dtype]` annotation."""
    if isinstance(ann_node, ast.Call):
        if len(ann_node.args) > 1:
            return ann_node.args[1]
        return next((k.value for k in ann_node.keywords if k.arg == "dtype"), ann_node)
    if isinstance(ann_node, ast.Subscript) and isinstance(ann_node.slice, ast.Tuple) and len(ann_node.slice.elts) > 1:
        return ann_node.slice.elts[1]
    return ann_node


def eager_annotation(p, node: ast.AnnAssign) -> list:
    """Eager style: `A: T.Tensor((M, K), dtype)` in the body declares parameter A."""
    ann = p.ev.eval(node.annotation)
    buf = declare(p, node.target.id, ann, node.annotation, p.span(node.target))
    p.env.values[node.target.id] = buf
    p.eager_params.append(buf)
    return []


def const_dims(p, dims: ConstDims) -> tuple:
    """Eager style `T.const("M, N")`: values from the instance when given, else symbolic (the JIT specialises
    on them, so they are compile-time constants whose values the checker does not know)."""
    try:
        given = p.env.lookup("__tilelsp_consts__")
    except KeyError:
        given = {}
    return tuple(given.get(n, N.Var(n, "int32", "symbolic")) for n in dims.names)
