"""Split a prim_func with several `with T.Kernel(...)` blocks into one single-launch prim_func per block.

Each part keeps the function's parameters, re-states the scalar lets that come before its block (every kernel
recomputes them) and takes the `T.alloc_global` workspaces its block uses as extra tensor parameters; the
launcher allocates those workspaces and launches the parts in order on one stream.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ...ir import nodes as N
from .common import LoweringError, used_buffers, view_root


@dataclass(frozen=True)
class KernelPart:
    """One T.Kernel block as its own prim_func, and the workspaces it takes after the function's parameters."""

    func: N.PrimFunc
    workspaces: tuple


def top_level(func: N.PrimFunc) -> tuple:
    """The statements directly in the function body."""
    return func.body.stmts if isinstance(func.body, N.SeqStmt) else (func.body,)


def workspaces_of(func: N.PrimFunc) -> list:
    """The `T.alloc_global` buffers declared outside every T.Kernel block, in declaration order."""
    return [s.buffer for s in top_level(func) if isinstance(s, N.Allocate) and s.buffer.scope == "global"]


def split_kernels(func: N.PrimFunc) -> list[KernelPart]:
    """One KernelPart per top-level T.Kernel, in launch order (the function itself when it has one and no
    workspace)."""
    stmts = top_level(func)
    launches = [s for s in stmts if isinstance(s, N.Launch)]
    spaces = workspaces_of(func)
    if len(launches) <= 1 and not spaces:
        return [KernelPart(func, ())]
    parts, lets = [], []
    for s in stmts:
        if isinstance(s, N.Launch):
            used = {view_root(b) for b in used_buffers(s.body)}
            mine = tuple(b for b in spaces if b in used)
            name = func.name if len(launches) == 1 else f"{func.name}_kernel{len(parts)}"
            part = replace(func, name=name, params=tuple(func.params) + mine, body=N.SeqStmt((*lets, s)))
            parts.append(KernelPart(part, mine))
        elif isinstance(s, N.LetStmt):
            lets.append(s)
        elif not (isinstance(s, (N.AnnotateLayout, N.UseSwizzle)) or isinstance(s, N.Allocate) and s.buffer in spaces
                  or isinstance(s, N.Evaluate) and isinstance(s.value, N.Const)):
            raise LoweringError("only scalar assignments (`x = n // 2`) and T.alloc_global may come before or "
                                "between `with T.Kernel(...)` blocks on CUDA; move this statement inside a kernel",
                                getattr(s, "span", None))
    if not parts:
        raise LoweringError("the kernel has no `with T.Kernel(...)` block", func.span)
    return parts
