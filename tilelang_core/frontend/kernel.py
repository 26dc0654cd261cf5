"""One kernel function to a `PrimFunc`: its parameters (T.Tensor buffers, scalar vars, eager-style
in-body annotations and `T.empty` outputs), its body, and the launch check.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from ..ir import nodes as N
from .consteval import Env
from .kernel_errors import INT32_MAX, INT64_MAX, KernelError, check_elements, check_value
from .parser import KernelParser
from .reducers import check_epochs
from .scope import Ctx, def_name_span, def_span
from .values import POISON, BuiltinRef, ConstDims, TensorSpec, Unknown, normalize_dtype, to_expr


@dataclass
class KernelInfo:
    """Labels of the kernel instance being parsed."""

    factory: str | None = None
    instance: str = ""
    out_idx: tuple | None = None
    bindings: tuple = ()
    pass_configs: tuple = ()


def parse_kernel(fn: ast.FunctionDef, env: Env, ctx: Ctx, info: KernelInfo) -> N.PrimFunc:
    """Parse a kernel function in `env` (the factory's environment) into a PrimFunc."""
    p = KernelParser(ctx, env.child())
    p.fn_node = fn
    params = _eager_signature_tensors(p, fn) if ctx.eager else _params(p, fn)
    reported = len(ctx.sink.items)  # a body statement that failed may have been the launch itself
    body = p.block(fn.body)
    check_epochs(p, N.SeqStmt(tuple(body)))
    if p.launches == 0 and not p.launch_seen and len(ctx.sink.items) == reported:
        ctx.emit("invalid-kernel", f"kernel `{fn.name}` has no `with T.Kernel(...)` launch; wrap its body in "
                 "`with T.Kernel(grid..., threads=128) as (bx, ...):`", def_name_span(ctx.mapper, fn))
    out_idx = info.out_idx
    if ctx.eager:
        params = _signature_order(fn, p.eager_params) + list(p.eager_outputs)
        if p.eager_outputs and out_idx is not None:
            ctx.emit("out-idx-conflict", f"Out index conflict: out_idx={list(out_idx)} was given, but kernel "
                     f"`{fn.name}` returns the T.empty tensors it declares, which are its outputs; drop out_idx, or "
                     "declare the outputs as parameters instead of T.empty", def_name_span(ctx.mapper, fn))
        elif p.eager_outputs:
            out_idx = tuple(range(len(p.eager_params), len(params)))
    configs = {**p.pass_configs, **dict(info.pass_configs)}  # the jit's / compile's configs win over the body's
    return N.PrimFunc(fn.name, tuple(params), N.SeqStmt(tuple(body), ctx.span(fn)), info.factory, info.instance,
                      out_idx, def_span(ctx.mapper, fn), def_name_span(ctx.mapper, fn), ctx.mapper.source.path,
                      tuple(info.bindings), pass_configs=tuple(sorted(configs.items())),
                      compile_flags=tuple(p.compile_flags), non_restrict=tuple(p.non_restrict))


def _signature_order(fn: ast.FunctionDef, declared: list) -> list:
    """Tensors declared in the body (eager / lazy style), in the order of the function's signature (those the
    signature does not name after, in declaration order): the order callers pass them in."""
    a = fn.args
    names = [arg.arg for arg in a.posonlyargs + a.args + a.kwonlyargs]
    return sorted(declared, key=lambda b: names.index(b.name) if b.name in names else len(names))



def _eager_signature_tensors(p: KernelParser, fn: ast.FunctionDef) -> list:
    """Eager style: the parameters annotated `T.Tensor(...)` in the signature, declared like in-body annotations,
    and those annotated `T.ptr` (a pointer parameter, given a tensor's address by the caller)."""
    a = fn.args
    for arg in a.posonlyargs + a.args + a.kwonlyargs:
        ann = p.ev.eval(arg.annotation) if arg.annotation is not None else None
        if normalize_dtype(ann.short if isinstance(ann, BuiltinRef) else ann) == "handle":
            p.env.values[arg.arg] = var = N.Var(arg.arg, "handle", "param", p.span(arg))
            p.eager_params.append(var)
            continue
        if not isinstance(ann, TensorSpec):
            continue
        try:
            buf = declare(p, arg.arg, p.ev.eval(arg.annotation), arg.annotation, p.span(arg))
        except KernelError as err:
            p.report(err, arg)
            continue
        p.env.values[arg.arg] = buf
        p.eager_params.append(buf)
    return []


def _params(p: KernelParser, fn: ast.FunctionDef) -> list:
    out = []
    a = fn.args
    for arg in a.posonlyargs + a.args + a.kwonlyargs:
        try:
            value = _param(p, arg)
        except KernelError as err:
            p.report(err, arg)
            out.append(N.Var(arg.arg, "int32", "param", p.span(arg)))
            p.env.values[arg.arg] = POISON  # its uses are not reported again
            continue
        p.env.values[arg.arg] = value
        out.append(value)
    return out


def _param(p: KernelParser, arg: ast.arg):
    if arg.annotation is None:
        raise KernelError("invalid-kernel", f"kernel parameter `{arg.arg}` needs a type: `{arg.arg}: T.Tensor((M, N), "
                          f"T.float16)` for a tensor or `{arg.arg}: T.int32` for a scalar", arg)
    ann = p.ev.eval(arg.annotation)
    return declare(p, arg.arg, ann, arg.annotation, p.span(arg))


def declare(p: KernelParser, name: str, ann, ann_node, span):
    """A parameter from its annotation value: a global Buffer for a tensor type, a Var for a dtype."""
    if isinstance(ann, TensorSpec):
        shape = []
        for d in ann.shape:
            e = to_expr(p.ev.operand(d), span) if not isinstance(d, str) else N.Var(d, "int32", "param", span)
            if e is None or isinstance(e, N.Const) and isinstance(e.value, float) and e.value.is_integer():
                raise KernelError("bad-arguments", f"the shape of `{name}` must be integers or T.dynamic dims", ann_node)
            # the lowering divides by dims; a dimension past int32 makes the tensor's indices 64-bit (as TileLang)
            shape.append(check_value(e, ann_node, f"a shape entry of `{name}`", maximum=INT64_MAX))
        wide = any(getattr(d, "dtype", None) == "int64" for d in shape)
        check_elements(f"tensor `{name}`", shape, ann_node, INT64_MAX if wide else INT32_MAX)
        dtype = "unknown" if ann.dtype == "unknown" else p.dtype_arg(_dtype_node(ann_node), ann.dtype)
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


def eager_annotation(p: KernelParser, node: ast.AnnAssign) -> list:
    """Eager style: `A: T.Tensor((M, K), dtype)` in the body declares parameter A."""
    ann = p.ev.eval(node.annotation)
    buf = declare(p, node.target.id, ann, node.annotation, p.span(node.target))
    p.env.values[node.target.id] = buf
    p.eager_params.append(buf)
    return []


def const_dims(p: KernelParser, dims: ConstDims) -> tuple:
    """Eager style `T.const("M, N")`: values from the instance when given, else symbolic (the JIT specialises
    on them, so they are compile-time constants whose values the checker does not know)."""
    try:
        given = p.env.lookup("__tilelsp_consts__")
    except KeyError:
        given = {}
    return tuple(given.get(n, N.Var(n, "int32", "symbolic")) for n in dims.names)
