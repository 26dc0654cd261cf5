"""One kernel function to a `PrimFunc`: its parameters in call order (each declared by params.py: T.Tensor buffers,
scalar vars, eager-style signature and in-body annotations, then `T.empty` outputs), its body, and the launch check.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from ..ir import nodes as N
from .consteval import Env
from .kernel_errors import KernelError
from .params import declare
from .parser import KernelParser
from .reducers import check_epochs
from .scope import Ctx, def_name_span, def_span
from .values import POISON, BuiltinRef, TensorSpec, normalize_dtype


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
