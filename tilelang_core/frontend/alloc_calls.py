"""Handlers of the builtins that make buffers: allocations of every scope, tensors over pointers or views,
reshaped views and eager-style outputs.
"""
from __future__ import annotations

import ast

from ..ir import nodes as N
from ..ir.arith import as_const
from ..language.dtypes import dtype_bits
from .handler_args import arg, shape_of, src_text
from .kernel_errors import ON_CHIP_MAX, KernelError, check_elements
from .values import BuiltinRef, TensorSpec, Unknown


def h_alloc(p, b, node, short):
    """T.alloc_shared / alloc_fragment / alloc_local: Allocate a named buffer."""
    default_scope = {"alloc_shared": "shared.dyn", "alloc_fragment": "local.fragment", "alloc_local": "local"}[short]
    shape = shape_of(p, arg(p, b, "shape"), b.get("shape"))
    dtype = _element_dtype(p.dtype_arg(b.get("dtype"), arg(p, b, "dtype")), b.get("dtype"))
    scope = arg(p, b, "scope") or default_scope
    scope = scope if isinstance(scope, str) else default_scope
    buf = N.Buffer(p.target_name or short, shape, dtype, scope, p.span(node))
    check_elements(f"`{src_text(b.get('shape'))}`", shape, b.get("shape"), ON_CHIP_MAX)
    p.emit(N.Allocate(buf, None, p.span(node)))
    return buf


def _element_dtype(dtype: str, node) -> str:
    """An on-chip buffer's element dtype: `handle` (T.ptr) only makes sense for global pointer tables."""
    if dtype == "handle":
        raise KernelError("invalid-dtype", f"`{src_text(node)}` is `handle`, an opaque pointer: shared, fragment and "
                          "local buffers need an element dtype such as T.float16 or T.float32", node)
    return dtype


OTHER_ALLOCS = {"alloc_reducer": "local.fragment", "alloc_global": "global", "alloc_buffer": "global",
                 "alloc_tmem": "shared.tmem"}


def h_alloc_other(p, b, node, short):
    """alloc_reducer / alloc_global / alloc_buffer / alloc_tmem: a buffer with the matching scope."""
    args, kwargs = p.ev.call_args(node)
    shape = args[0] if args else kwargs.get("shape", (1,))
    dtype_val = args[1] if len(args) > 1 else kwargs.get("dtype", "float32")
    dtype_node = node.args[1] if len(node.args) > 1 else next((k.value for k in node.keywords if k.arg == "dtype"),
                                                              None)
    scope = kwargs.get("scope") if isinstance(kwargs.get("scope"), str) else OTHER_ALLOCS[short]
    buf = N.Buffer(p.target_name or short, shape_of(p, shape, node), p.dtype_arg(dtype_node, dtype_val), scope,
                   p.span(node))
    p.emit(N.Allocate(buf, None, p.span(node)))
    return buf


def h_opaque(p, b, node, short):
    """Builtins whose value the checks do not model (barriers, descriptors): evaluated for errors only."""
    p.ev.call_args(node)
    return Unknown(f"T.{short}")


def h_alloc_var(p, b, node, short):
    """T.alloc_var(dtype, init=...): a one-element thread-local scalar."""
    dtype = p.dtype_arg(b.get("dtype"), arg(p, b, "dtype"))
    extra = b.get("args") or []
    init_node = b.get("init") if isinstance(b.get("init"), ast.AST) else (extra[0] if extra else None)
    init = p.ev.scalar(init_node) if init_node is not None else None
    buf = N.Buffer(p.target_name or "var", (N.Const(1),), dtype, "local.var", p.span(node))
    p.emit(N.Allocate(buf, init, p.span(node)))
    return buf


def h_make_tensor(p, b, node, short):
    """T.make_tensor(ptr, shape, dtype): a global tensor over a pointer (`ptrs[i]` of a T.ptr tensor, bound here
    to a handle Var, so that later writes to `i` do not move the tensor)."""
    args, kwargs = p.ev.call_args(node)
    ptr = args[0] if args else kwargs.get("ptr")
    shape = args[1] if len(args) > 1 else kwargs.get("shape", ())
    dtype = args[2] if len(args) > 2 else kwargs.get("dtype", "float32")
    dnode = node.args[2] if len(node.args) > 2 else None
    name, data = p.target_name or "tensor", None
    if isinstance(ptr, (N.Load, N.Var, N.Call, N.Cast, N.BinOp)):
        data = N.Var(f"{name}_data", "handle", "let", p.span(node))
        p.emit(N.LetStmt(data, ptr, p.span(node)))
    return N.Buffer(name, shape_of(p, shape, node), p.dtype_arg(dnode, dtype), "global", p.span(node), data=data)


def h_tensor(p, b, node, short):
    """T.Tensor(shape, dtype) (and T.StridedTensor(shape, strides, dtype)) is a tensor type; with a data pointer
    (`T.Tensor(shape, dtype, A.data)`) a view."""
    from .constcalls import call_builtin_const

    args, kwargs = p.ev.call_args(node)
    spec = call_builtin_const(BuiltinRef("T." + short), args, kwargs, "T.Tensor")
    if short != "StridedTensor" and (len(args) >= 3 or "data" in kwargs) and isinstance(spec, TensorSpec):
        data = args[2] if len(args) >= 3 else kwargs.get("data")
        base = data if isinstance(data, N.Buffer) else None  # `A.data` evaluates to A
        return N.Buffer(p.target_name or "view", shape_of(p, spec.shape, node), spec.dtype,
                        base.scope if base is not None else "global", p.span(node), base)
    return spec


def h_reshape(p, b, node, short):
    """T.reshape(src, shape) / T.view(src, shape=None, dtype=None): the same storage with a new shape."""
    args, kwargs = p.ev.call_args(node)
    src = args[0] if args else kwargs.get("src")
    if not isinstance(src, N.Buffer):
        return Unknown(f"T.{short}")
    shape = args[1] if len(args) > 1 else kwargs.get("shape")
    dtype = args[2] if len(args) > 2 else kwargs.get("dtype")
    new_shape = shape_of(p, shape, node) if shape is not None else src.shape
    new_dtype = p.dtype_arg(None, dtype) if dtype is not None else src.dtype
    _check_same_bytes(short, src, new_shape, new_dtype, node)
    return N.Buffer(p.target_name or src.name, new_shape, new_dtype, src.scope, p.span(node), src)


def _bits(shape, dtype: str) -> int | None:
    """The constant size in bits of a buffer of `shape` and `dtype` (None when a dimension is symbolic)."""
    total = dtype_bits(dtype)
    for d in shape:
        v = as_const(d)
        if not isinstance(v, int) or total is None:
            return None
        total *= v
    return total


def _check_same_bytes(short: str, src: N.Buffer, shape, dtype: str, node) -> None:
    """T.reshape / T.view keep the storage: the new shape and dtype must hold exactly the buffer's bytes."""
    old, new = _bits(src.shape, src.dtype), _bits(shape, dtype)
    if old is None or new is None or old == new:
        return
    dims = ", ".join(str(as_const(d)) for d in shape)
    raise KernelError("reshape-size-mismatch", f"T.{short} of `{src.name}` ({_size(old)}) as ({dims}) {dtype} "
                      f"({_size(new)}): the sizes differ; give a shape (and dtype) that holds exactly {_size(old)}",
                      node)


def _size(bits: int) -> str:
    return f"{bits // 8:,} bytes" if bits % 8 == 0 else f"{bits:,} bits"


def h_empty(p, b, node, short):
    """Eager style `C = T.empty((M, N), dtype)`: an output tensor of the kernel."""
    args, kwargs = p.ev.call_args(node)
    dtype_node = next((k.value for k in node.keywords if k.arg == "dtype"), None)
    if args and isinstance(args[0], (tuple, list)):
        shape = args[0]
        if len(args) > 1:
            kwargs["dtype"], dtype_node = args[1], node.args[1]
    else:
        shape = tuple(a for a in args if not isinstance(a, str))
    dtype = p.dtype_arg(dtype_node, kwargs.get("dtype", "float32"))
    buf = N.Buffer(p.target_name or "out", shape_of(p, shape, node), dtype, "global", p.span(node))
    p.eager_outputs.append(buf)
    return buf
