"""The kernel of a `T.CUDASourceCodeKernel` launch (frontend/source_kernel.py): the user's CUDA source as it is,
launched at its entry with the launch's grid and threads; the entry's arguments are the prim_func's tensors
(pointers) and scalars in order, then its symbolic dims (int)."""
from __future__ import annotations

import re

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.printer import expr_str
from ...ir.visitor import walk
from .common import LoweringError

CALL = "cuda_source_kernel"  # the frontend's Call in the launch body


def source_launch(func: N.PrimFunc) -> tuple[N.Launch, N.Call] | None:
    """(launch, call) when `func` is a T.CUDASourceCodeKernel launch, else None."""
    body = func.body.stmts if isinstance(func.body, N.SeqStmt) else (func.body,)
    launches = [s for s in body if isinstance(s, N.Launch)]
    for launch in launches:
        call = launch.body.value if isinstance(launch.body, N.Evaluate) else None
        if isinstance(call, N.Call) and call.name == CALL:
            if len(launches) > 1:
                raise LoweringError("a prim_func with T.CUDASourceCodeKernel launches nothing else; put other "
                                    "kernels in prim_funcs of their own", launch.span)
            return launch, call
    return None


def source_kernel(func: N.PrimFunc, launch: N.Launch, call: N.Call) -> tuple:
    """(entry symbol, source, grid, block, params) of a source launch (generate.py makes its CudaKernel)."""
    source, entry = (a.value if isinstance(a, N.Const) and isinstance(a.value, str) else None for a in call.args)
    if source is None or entry is None:
        raise LoweringError("T.CUDASourceCodeKernel: the source and entry_name must be known strings when the "
                            "kernel is built", call.span)
    if not re.search(r'extern\s+"C"[^;{]*__global__[^;{]*\b' + re.escape(entry) + r"\s*\(", source):
        raise LoweringError(f"T.CUDASourceCodeKernel: declare the entry `extern \"C\" __global__ void {entry}(...)` "
                            "so that the launcher finds it by name (a C++ name is mangled)", call.span)
    block = 1
    for t in launch.threads:
        if as_int(t) is None:
            raise LoweringError("T.CUDASourceCodeKernel: threads= must be known when the kernel is built", call.span)
        block *= as_int(t)
    grid = tuple(as_int(g) if as_int(g) is not None else expr_str(g) for g in launch.grid)
    return entry, source, grid, (block, 1, 1), _params(func)


def _params(func: N.PrimFunc) -> list:
    out, dims = [], []
    out_idx = {i % len(func.params) for i in func.out_idx or ()} if func.params else set()
    for k, p in enumerate(func.params):
        if isinstance(p, N.Buffer):
            out.append({"name": p.name, "kind": "tensor", "dtype": p.dtype, "is_output": k in out_idx, "arg": p.name,
                        "shape": [as_int(d) if as_int(d) is not None else expr_str(d) for d in p.shape]})
            dims += [v for d in p.shape for v in walk(d) if isinstance(v, N.Var) and v not in dims]
        else:
            out.append({"name": p.name, "kind": "scalar", "dtype": p.dtype, "is_output": False, "shape": [],
                        "arg": p.name})
    return out + [{"name": v.name, "kind": "dim", "dtype": "int32", "is_output": False, "shape": [], "arg": v.name}
                  for v in dims]
