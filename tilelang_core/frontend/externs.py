"""User CUDA code in a kernel: `T.import_source(code)` (device functions spliced into the generated file),
`T.call_extern(dtype, name, *args)` (a call of one of them), `T.access_ptr(base, access_type)` (the
address of a buffer element, an argument of such calls), `T.dp4a(A, B, C)` (an int8 dot product) and
`T.tvm_warp_shuffle` (a value from another lane of the warp). A whole kernel written as CUDA source
(`T.CUDASourceCodeKernel`) is frontend/source_kernel.py's.

`Call("import_source", (Const(code, "str"),))`, `Call("call_extern", (Const(name, "str"), *args), dtype)` (a
symbolic Var in place of the Const where the checker cannot work out the text; the CUDA lowering refuses it),
`Call("access_ptr", (Load(buffer, head indices),), "handle")`, `Call("dp4a", (three access_ptr calls))`.
"""
from __future__ import annotations

import ast

from ..ir import nodes as N
from .expr_info import expr_dtype
from .handler_args import depends_on_unknown
from .kernel_errors import KernelError
from .regions import region_of
from .values import normalize_dtype, to_expr


def _arg(node, position: int, name: str):
    """The call's argument at `position` or keyword `name` (None when absent)."""
    if len(node.args) > position:
        return node.args[position]
    return next((k.value for k in node.keywords if k.arg == name), None)


def h_import_source(p, b, node, short):
    """T.import_source(code): the code (a string of CUDA device functions) goes into the generated file."""
    src_node = _arg(node, 0, "source")
    code = p.ev.eval(src_node) if src_node is not None else None
    if code is None:
        return None
    if depends_on_unknown(code):  # text the checker cannot work out (a library call): the JIT knows it
        return N.Call("import_source", (to_expr(code, p.span(src_node)),), "int32", p.span(node))
    if not isinstance(code, str):
        raise KernelError("bad-arguments", "T.import_source takes the CUDA source text as a string", src_node or node)
    return N.Call("import_source", (N.Const(code, "str"),), "int32", p.span(node))


def h_call_extern(p, b, node, short):
    """T.call_extern(dtype, func_name, *args): a call of a device function the kernel imports or CUDA provides."""
    dtype_kw = next((k.value for k in node.keywords if k.arg == "dtype"), None)
    positional = ([dtype_kw] if dtype_kw is not None else []) + list(node.args)  # dtype= goes first, as in TileLang
    dtype_node, name_node = (positional + [None, None])[:2]
    if name_node is None:
        name_node = next((k.value for k in node.keywords if k.arg == "func_name"), None)
    if dtype_node is None or name_node is None:
        raise KernelError("bad-arguments", "T.call_extern takes (dtype, func_name, *args)", node)
    dtype_value = p.ev.eval(dtype_node)
    dtype = "handle" if normalize_dtype(dtype_value) == "handle" else p.dtype_arg(dtype_node, dtype_value)
    name = p.ev.eval(name_node)
    if depends_on_unknown(name):  # a name the checker cannot work out (a library call): the JIT knows it
        name_arg = to_expr(name, p.span(name_node))
    elif not isinstance(name, str) or not name.replace("_", "a").replace("::", "").isalnum():
        raise KernelError("bad-arguments", "the func_name of T.call_extern must be a C identifier string such as "
                          "\"my_decode\"", name_node)
    else:
        name_arg = N.Const(name, "str")
    args = tuple(p.ev.scalar(a) for a in positional[2:])
    return N.Call("call_extern", (name_arg, *args), dtype, p.span(node))


def _element_ptr(p, node) -> N.Call:
    region = region_of(p, node)
    head = tuple(a.start for a in region.axes) or tuple(N.Const(0) for _ in region.buffer.shape)
    return N.Call("access_ptr", (N.Load(region.buffer, head, p.span(node)),), "handle", p.span(node))


def h_access_ptr(p, b, node, short):
    """T.access_ptr(base, access_type="r", ...): the address of `base` (a buffer, a slice or an element)."""
    base_node = _arg(node, 0, "base")
    if base_node is None:
        raise KernelError("bad-arguments", "T.access_ptr takes the buffer (or element) whose address it gives", node)
    return _element_ptr(p, base_node)


def h_dp4a(p, b, node, short):
    """T.dp4a(A, B, C): C (int32) += the dot product of the four int8 values at A and at B."""
    if len(node.args) != 3:
        raise KernelError("bad-arguments", "T.dp4a takes (A, B, C): four int8 values at A and at B, an int32 C", node)
    ptrs = tuple(_element_ptr(p, a) for a in node.args)
    for ptr, want, a in zip(ptrs, ("int8", "int8", "int32"), node.args):
        if ptr.args[0].buffer.dtype != want:
            raise KernelError("bad-arguments", f"T.dp4a needs int8 A and B and an int32 accumulator C; "
                              f"`{ast.unparse(a)}` is {ptr.args[0].buffer.dtype}", a)
    return N.Call("dp4a", ptrs, "int32", p.span(node))


def h_warp_shuffle(p, b, node, short):
    """T.tvm_warp_shuffle(mask, value, lane, width, warp_size): `value` from lane `lane` of each `width` group."""
    if len(node.args) != 5:
        raise KernelError("bad-arguments", "T.tvm_warp_shuffle takes (mask, value, src_lane, width, warp_size)", node)
    args = tuple(p.ev.scalar(a) for a in node.args)
    return N.Call("tvm_warp_shuffle", args, expr_dtype(args[1]), p.span(node))


EXTERN_HANDLERS = {"import_source": h_import_source, "call_extern": h_call_extern, "access_ptr": h_access_ptr,
                   "dp4a": h_dp4a, "tvm_warp_shuffle": h_warp_shuffle}
