"""`T.CUDASourceCodeKernel(*grid, threads=128, source_code_or_path=..., entry_name="main_kernel")`: a launch whose
kernel is the user's own CUDA source (inline text or a file), with the prim_func's tensors, scalars and then its
symbolic dims as the entry's arguments.

A Launch of the grid and threads whose body is `Evaluate(Call("cuda_source_kernel", (Const(source, "str"),
Const(entry, "str"))))`; codegen/cuda/source_kernel.py turns it into the kernel, the CPU backend refuses it (it cannot
compile CUDA). An entry that is not a `__global__` function of the source is reported here, at the call."""
from __future__ import annotations

import ast
import os
import re

from ..ir import nodes as N
from .handler_args import depends_on_unknown
from .kernel_errors import KernelError, check_value
from .loops import launch_threads
from .values import to_expr

SOURCE_KERNEL_CALL = "cuda_source_kernel"
_GLOBAL = re.compile(r"__global__\s+(?:\w+\s+)*?(?:__launch_bounds__\([^)]*\)\s+)?(\w+)\s*\(")
_SOURCE_MARKS = ("\n", "__global__", 'extern "C"', "#include")


def global_functions(source: str) -> list[str]:
    """The names of the `__global__` functions a CUDA source defines or declares, in order, once each."""
    return list(dict.fromkeys(m.group(1) for m in _GLOBAL.finditer(source)))


def h_cuda_source_kernel(p, b, node, short):
    """T.CUDASourceCodeKernel(*blocks, threads=128, source_code_or_path, entry_name="main_kernel")."""
    if p.launch_depth:
        raise KernelError("invalid-kernel", "T.CUDASourceCodeKernel launches a kernel of its own; call it in the "
                          "prim_func body, outside `with T.Kernel(...)`", node)
    kwargs = {k.arg: k.value for k in node.keywords}
    if len(node.args) > 3 or not node.args:
        raise KernelError("invalid-kernel", "T.CUDASourceCodeKernel takes 1 to 3 grid dimensions", node)
    if "source_code_or_path" not in kwargs:
        raise KernelError("bad-arguments", "T.CUDASourceCodeKernel needs source_code_or_path= (the CUDA source text "
                          "or a .cu file)", node)
    grid = tuple(check_value(p.ev.scalar(g), g, f"the grid extent `{ast.unparse(g)}`") for g in node.args)
    threads = launch_threads(p, kwargs.get("threads"), node)  # None: 128, as T.Kernel
    source = _source(p, kwargs["source_code_or_path"])
    entry = p.ev.eval(kwargs["entry_name"]) if "entry_name" in kwargs else "main_kernel"
    if isinstance(source, str) and isinstance(entry, str):
        entries = global_functions(source)
        if entry not in entries:
            raise KernelError("bad-arguments", f"T.CUDASourceCodeKernel: the source has no __global__ function "
                              f"`{entry}`. Available entries: {', '.join(entries) or '(none)'}",
                              kwargs.get("entry_name", node))
        args = (N.Const(source, "str"), N.Const(entry, "str"))
    elif depends_on_unknown(source) or depends_on_unknown(entry):  # the checker cannot tell; the JIT can
        args = (to_expr(source, p.span(node)) if not isinstance(source, str) else N.Const(source, "str"),
                to_expr(entry, p.span(node)) if not isinstance(entry, str) else N.Const(entry, "str"))
    else:
        raise KernelError("bad-arguments", "T.CUDASourceCodeKernel takes the source as a string or a path and "
                          "entry_name as a string", node)
    p.launches += 1
    p.launch_seen = True
    call = N.Call(SOURCE_KERNEL_CALL, args, None, p.span(node))
    p.emit(N.Launch(grid, threads, (), N.Evaluate(call, p.span(node)), p.span(node)))


def _source(p, value_node):
    """The CUDA text: a path (an os.PathLike, or a string naming an existing file) is read, other text is the
    source itself, as TileLang decides."""
    value = p.ev.eval(value_node)
    if isinstance(value, os.PathLike) or isinstance(value, str) and not any(m in value for m in _SOURCE_MARKS):
        path = os.path.expanduser(os.fspath(value))
        if os.path.isfile(path):
            with open(path, encoding="utf-8") as fh:
                return fh.read()
        raise KernelError("bad-arguments", f"T.CUDASourceCodeKernel: CUDA source file not found: {path}", value_node)
    return value
