"""CUDA code generation: tile IR -> thread-level TVMScript (ours) -> TVM tirx pipeline -> CUDA C source.

`generate(func, arch)` returns every intermediate text plus the launch configuration and parameter
list an artifact needs. tvm is imported only through `tvm_loader.load()`.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from ...ir import nodes as N
from ...ir.arith import as_int
from ...ir.printer import expr_str
from ...ir.visitor import op_regions, walk
from ...options import codegen_options, kernel_configs, options_scope
from ...passes.layouts import describe
from ...target import BF16, DEFAULT_ARCH, parse_target
from ..tvm_pipelines import tirx_without_cse
from .common import LoweringError
from .expr import dtype_of, is_wide
from .fastmath import mark_source
from .kernel_plan import KernelPlan, plan_kernel
from .lower import KernelEmitter
from .packed_check import check_packed_accesses
from .source_kernel import source_kernel, source_launch
from .split import split_kernels
from .tvm_source import (clean_source, finish_source, first_error_line, host_made_params, kernel_signature,
                         kernel_symbol, without_restrict)
from .cluster import DEVICE as CLUSTER_DEVICE
from .cluster import SIZE as CLUSTER_SIZE
from .cluster import source_with_dims
from .threads import unnamed_block
from .tma_atomic import check_tma_atomics
from .persistent import DEVICE as PERSISTENT_DEVICE
from .persistent import launch_lines
from .lpt import reverse_heavy
from .raster import rasterize
from .tma import DEVICE as TMA_DEVICE
from .tma import rewrite_signature
from .tma_store import DEVICE as STORE_DEVICE
from .streamk import DEVICE as STREAMK_DEVICE
from .streamk import PARAM as STREAMK_PARAM

_CUDA_FP8 = re.compile(r"\bfloat8_e4m3\b")  # CUDA has one e4m3 type (__nv_fp8_e4m3); TVM knows it as e4m3fn
_TF32 = '"tfloat32"'  # TileLang's tfloat32 is stored as float32 (TVM has no such dtype); gemms read it as float32


@dataclass
class CudaKernel:
    """Everything codegen learned about one kernel instance."""

    name: str
    kernel_symbol: str
    tvmscript: str
    tir: str
    source: str
    grid: tuple          # ints or Python expressions over the dim names
    block: tuple
    smem_bytes: int
    smem_breakdown: list
    params: list         # dicts: name, kind (tensor|scalar|dim), dtype, shape, is_output
    line_map: list = field(default_factory=list)
    layouts_text: str = ""
    pipeline_text: str = ""
    launches: list = field(default_factory=list)    # dicts: kernel_symbol, grid, block, smem_bytes, params
    workspaces: list = field(default_factory=list)  # dicts: name, dtype, shape (T.alloc_global, zero-filled)
    tensor_maps: list = field(default_factory=list)  # TMA maps the launcher encodes: arg, tensor, dtype, box, swizzle
    cooperative: bool = False  # T.sync_grid: launched with cuLaunchCooperativeKernel, every block resident at once
    persistent: bool = False  # a tile loop (persistent.py): the launcher caps the grid at the resident blocks
    cluster: int = 1  # blocks per cluster (cluster.py): compiled into the kernel, the launcher rounds the grid


def tvmscript(func: N.PrimFunc, arch: str, planned: KernelPlan | None = None) -> tuple[str, KernelEmitter, list]:
    """The thread-level TVMScript text of a kernel, its emitter and the parameter list (`planned`: the kernel's
    plan when the caller made it, else planned here)."""
    kp = planned or plan_kernel(func, arch)
    func, launch = kp.func, kp.launch
    em = KernelEmitter(func, kp.layouts, kp.pipelines, kp.swizzled, kp.threads, kp.wgmma, kp.ws)
    ws = em.roles.ws
    persistent = ws.persistent if ws is not None else None
    params, header = _params(func, em)
    header += [f"{m['arg']}: T.handle" for m in (ws.tensor_maps if ws else ())]
    if ws is not None and ws.stream_k is not None:  # the launcher's workspace of partial sums and flags
        header.append(f"{STREAMK_PARAM}: T.handle")
        params.append({"name": STREAMK_PARAM, "kind": "workspace", "dtype": "float32", "is_output": False,
                       "shape": [], "arg": STREAMK_PARAM})
    em.allocate()
    for k, v in enumerate(launch.block_vars):
        em.var_text[v] = em.name(v)
    if persistent is None:  # a persistent kernel rasterises each tile index inside its tile loop
        rasterize(em, launch)
        reverse_heavy(em, launch)  # longest blocks first (lpt.py; never with a T.use_swizzle order)
    if ws is None:
        em.marked_body(N.SeqStmt((*_prologue(func, launch), launch.body)))
    else:  # barrier setup, then the producer warpgroup's TMA loop and the consumers' body (tma.plan_tma)
        em.marked_body(N.SeqStmt(tuple(_prologue(func, launch))))
        em.specialized(launch.body)
    smem = em.smem_plan(parse_target(arch).arch.smem_per_block)
    out = ["@T.prim_func", f"def main({', '.join(header)}):",
           f'    T.func_attr({{"global_symbol": "{_symbol(func.name)}", "tirx.noalias": True}})']
    axes = ("blockIdx.x", "blockIdx.y", "blockIdx.z")
    if persistent is not None:
        out += launch_lines(em, launch, persistent)
    for v, ext, tag in zip(launch.block_vars, launch.grid, axes) if persistent is None else ():
        out.append(f'    {em.name(v)} = T.launch_thread("{tag}", {em.idx(ext)})')
    for k, ext in enumerate(launch.grid[len(launch.block_vars):], len(launch.block_vars)):  # T.get_block_binding
        out.append(f'    {unnamed_block(k)} = T.launch_thread("{axes[k]}", {em.idx(ext)})')
    out.append(f'    tx = T.launch_thread("threadIdx.x", {em.block_threads})')
    if smem.total:
        out.append(f'    smem = T.alloc_buffer(({smem.total},), "uint8", scope="shared.dyn")')
        out += ["    " + ln for ln in smem.lines]
    out += ["    " + ln for ln in em.frame.allocs]
    out += em.lines
    return _CUDA_FP8.sub("float8_e4m3fn", "\n".join(out) + "\n").replace(_TF32, '"float32"'), em, params


def _prologue(func: N.PrimFunc, launch: N.Launch) -> list:
    """The scalar lets before `with T.Kernel(...)`: recomputed by every thread (they read only parameters)."""
    stmts = func.body.stmts if isinstance(func.body, N.SeqStmt) else (func.body,)
    out = []
    for s in stmts[:next(i for i, s in enumerate(stmts) if s is launch)]:
        if isinstance(s, (N.AnnotateLayout, N.UseSwizzle)) or isinstance(s, N.Evaluate) and (isinstance(
                s.value, N.Const) or isinstance(s.value, N.Call) and s.value.name == "assume"):
            continue  # a T.assume runs nothing (one over sizes and scalars is checked at the call: runtime.assumptions)
        if not isinstance(s, N.LetStmt):
            raise LoweringError("only scalar assignments (`x = n // 2`) may come before `with T.Kernel(...)` on "
                                "CUDA; move this statement inside the kernel", s.span)
        out.append(s)
    return out


def _symbol(name: str) -> str:
    return re.sub(r"\W", "_", name) or "kernel"


def _params(func: N.PrimFunc, em: KernelEmitter) -> tuple[list, list]:
    """Kernel parameters: the function's tensors and scalars, then symbolic dims (int32, or int64 where declared:
    a tensor with an int64 dim is indexed in 64 bits, TVM widening its index arithmetic)."""
    params, header, dims = [], [], []
    out_idx = set()
    n = len(func.params)
    for i in func.out_idx or ():
        out_idx.add(i % n if n else i)
    for p in func.params:
        if isinstance(p, N.Var):
            em.var_text[p] = em.name(p)
    for p in func.params:
        for d in getattr(p, "shape", ()):
            for v in walk(d):
                if isinstance(v, N.Var) and v not in em.var_text and v not in dims:
                    dims.append(v)
    for v in dims:
        em.var_text[v] = em.name(v)
    for k, p in enumerate(func.params):
        if isinstance(p, N.Buffer):
            shape = ", ".join(em.emit(d) if dtype_of(d) == "int64" else em.idx(d) for d in p.shape) + (
                "," if len(p.shape) == 1 else "")
            header.append(f'{em.name(p)}: T.Buffer(({shape}), "{p.dtype}")')
            params.append({"name": p.name, "kind": "tensor", "dtype": p.dtype, "is_output": k in out_idx,
                           "arg": em.name(p) + "_ptr", "index_bits": 64 if is_wide(p) else 32,
                           "shape": [as_int(d) if as_int(d) is not None else expr_str(d) for d in p.shape]})
        else:
            header.append(f"{em.name(p)}: T.{p.dtype}")
            params.append({"name": p.name, "kind": "scalar", "dtype": p.dtype, "is_output": False, "shape": [],
                           "arg": em.name(p)})
    dim_header = []
    for v in dims:
        t = "int64" if v.dtype == "int64" else "int32"
        dim_header.append(f"{em.name(v)}: T.{t}")
        params.append({"name": v.name, "kind": "dim", "dtype": t, "is_output": False, "shape": [],
                       "arg": em.name(v)})
    return params, dim_header + header  # dims first: buffer shapes refer to them


def target_of(arch: str):
    """The TVM Target for an arch, with the real opt-in shared-memory limit."""
    from .. import tvm_loader

    tvm = tvm_loader.load().tvm
    spec = parse_target(arch).arch
    return tvm.target.Target({"kind": "cuda", "arch": spec.name, "max_shared_memory_per_block": spec.smem_per_block,
                              "max_threads_per_block": spec.threads_per_block})


def generate(func: N.PrimFunc, arch: str = DEFAULT_ARCH, lowered: tuple | None = None) -> CudaKernel:
    """Lower a kernel instance all the way to CUDA C: one `__global__` per `with T.Kernel(...)` block, in launch
    order, in one source (raises LoweringError with a span); the kernel's pass configs in force. `lowered`: the
    (parts, tvmscript results) the driver already made for this func (lowering.py), else made here."""
    given = source_launch(func)
    if given is not None:  # T.CUDASourceCodeKernel: the user's CUDA is the kernel
        symbol, source, grid, block, params = source_kernel(func, *given)
        return CudaKernel(func.name, symbol, "", "", source, grid, block, 0, [], params)
    check_packed_accesses(func)
    with options_scope(codegen_options(kernel_configs(func))):
        return _generate(func, arch, lowered)


def _generate(func: N.PrimFunc, arch: str, lowered: tuple | None) -> CudaKernel:
    from .. import tvm_loader

    parts = lowered[0] if lowered else split_kernels(func)
    scripts = lowered[1] if lowered else [tvmscript(part.func, arch) for part in parts]
    for part, (_, em, _) in zip(parts, scripts):
        _within_limits(part.func, em, arch)
        _no_wide_tile_ops(part.func)
    ns = tvm_loader.load()
    from tvm.script import tirx as T  # noqa: N812  (through the shim: tvm_loader.load() ran first)

    try:
        prims = [_prim_func(ns, text, T) for text, _, _ in scripts]
        config = {"tirx.UnrollLoop": {"explicit_unroll": False}}
        mod = ns.tvm.IRModule({("main" if k == 0 else f"main{k}"): prim for k, prim in enumerate(prims)})
        with ns.tvm.transform.PassContext(config=config), tvm_loader.cuda_source_only():
            ex = ns.tvm.compile(mod, target=target_of(arch), tir_pipeline="tirx")
        cuda = clean_source(ex.mod.imports[0].inspect_source())
        if host_made_params(cuda):
            # TVM's CSE hoisted a host expression the kernel reads into a parameter the launcher cannot compute
            # (deepseek_v32/fp8_lighting_indexer): compile again without CSE, so the kernel computes it itself
            with ns.tvm.transform.PassContext(config=config), tvm_loader.cuda_source_only():
                ex = ns.tvm.compile(mod, target=target_of(arch), tir_pipeline=tirx_without_cse(ns.tvm))
            cuda = clean_source(ex.mod.imports[0].inspect_source())
    except Exception as exc:  # tvm raises many types; report at the kernel
        raise LoweringError(f"TVM rejected the lowered kernel: {first_error_line(exc)}", func.span,
                            "codegen-error") from exc
    extra = list(dict.fromkeys(code for _, em, _ in scripts for code in em.device_library.snippets))
    specialised = [em.roles.ws for _, em, _ in scripts if em.roles.ws is not None]
    extra += [TMA_DEVICE] if specialised else []
    extra += [PERSISTENT_DEVICE] if any(ws.persistent for ws in specialised) else []
    extra += [STORE_DEVICE] if any(ws.store for ws in specialised) else []
    extra += [CLUSTER_DEVICE] if any(ws.cluster for ws in specialised) else []
    extra += [STREAMK_DEVICE] if any(ws.stream_k for ws in specialised) else []
    if not parse_target(arch).has(BF16):  # TVM includes cuda_bf16.h for sm_80+ only; the library uses its types
        cuda = "#include <cuda_bf16.h>\n" + cuda
    source, line_map = finish_source(cuda, extra)
    source = without_restrict(source, [p["arg"] for _, _, params in scripts for p in params
                                       if p["kind"] == "tensor" and p["name"] in func.non_restrict])
    if specialised:
        source = rewrite_signature(source, [m for ws in specialised for m in ws.tensor_maps])
    launches = [_launch_of(part, em, params, source) for part, (_, em, params) in zip(parts, scripts)]
    for part, step in zip(parts, launches):
        if step.get("cluster"):
            source = source_with_dims(source, step["kernel_symbol"])
        elif part.func.launch.cluster:  # T.ClusterKernel(..., cluster_dims=...)
            source = source_with_dims(source, step["kernel_symbol"], part.func.launch.cluster)
    first, em = launches[0], scripts[0][1]
    source = mark_source(source)  # tl.enable_fast_math: nvcc --use_fast_math (fastmath.py)
    several = len(parts) > 1 or bool(parts[0].workspaces) or "stream_k" in first or any(
        "l2_persist" in step for step in launches)  # workspaces, per-launch records: a launch list
    text = "\n".join(t for t, _, _ in scripts)
    layouts = "\n".join(describe(e.plan.layouts) for _, e, _ in scripts)
    pipes = "\n".join(p.describe() for _, e, _ in scripts for p in e.plan.pipelines.values())
    return CudaKernel(func.name, first["kernel_symbol"], text, "\n".join(p.script() for p in prims), source,
                      first["grid"], first["block"], first["smem_bytes"], em.shared_memory.breakdown,
                      _user_params(first["params"]) if several else first["params"], line_map, layouts, pipes,
                      launches if several else [], _workspaces(parts), first["tensor_maps"], first["cooperative"],
                      first.get("persistent", False), first.get("cluster", 1))


def _within_limits(func: N.PrimFunc, em: KernelEmitter, arch: str) -> None:
    """Refuse, at the kernel's `T.Kernel` line, a plan whose launch would ask more dynamic shared memory or threads
    per block than `arch` allows (the driver would refuse the launch); the checks' estimate missed something."""
    lim, span = parse_target(arch).arch, func.launch.span or func.span
    if em.block_threads > lim.threads_per_block:
        why = f" ({em.threads} and the TMA producer warpgroup)" if em.roles.ws is not None else ""
        raise LoweringError(f"the CUDA code of this T.Kernel needs {em.block_threads} threads per block{why}, over "
                            f"the limit of {lim.threads_per_block}; use fewer threads", span, "threads-exceeded")
    smem = em.shared_memory
    if smem.total > lim.smem_per_block:
        parts = ", ".join(f"{name} {size * stages} B" for name, size, stages in smem.breakdown)
        raise LoweringError(f"the CUDA code of this T.Kernel needs {smem.total} B of shared memory per block on "
                            f"{arch}, over its limit of {lim.smem_per_block} B ({parts}); lower num_stages or "
                            f"shrink the shared tiles", span, "shared-memory-exceeded")
    size = math.prod(func.launch.cluster or (1,))
    check_tma_atomics(func, arch)
    remote = next((n for n in walk(func.body) if isinstance(n, N.Call) and n.name == "mbarrier_arrive"
                   and len(n.args) > 1), None)
    if remote is not None and lim.max_cluster_size == 1:
        raise LoweringError(f"T.mbarrier_arrive with cta_id arrives on another block's barrier of the cluster, which "
                            f"needs sm_90 or newer (not {arch})", remote.span, "lowering-unsupported")
    if size > lim.max_cluster_size:
        if lim.max_cluster_size == 1:
            raise LoweringError(f"thread-block clusters (cluster_dims={func.launch.cluster}) need sm_90 or newer; "
                                f"{arch} has none: compile for sm_90a, or drop cluster_dims", span,
                                "lowering-unsupported")
        raise LoweringError(f"a cluster of {size} blocks (cluster_dims={func.launch.cluster}) is over {arch}'s "
                            f"portable limit of {lim.max_cluster_size}; use smaller cluster_dims", span,
                            "invalid-kernel")


def _no_wide_tile_ops(func: N.PrimFunc) -> None:
    """Refuse a tile op (T.copy, T.gemm, ...) on a tensor with an int64 dimension: element accesses of such a tensor
    are indexed in 64 bits (expr.is_wide), the tile ops' address arithmetic is 32-bit and would wrap."""
    for node in walk(func.body):
        if isinstance(node, N.TILE_OPS):
            reads, writes = op_regions(node)
            wide = next((r.buffer for r in reads + writes if is_wide(r.buffer)), None)
            if wide is not None:
                raise LoweringError(f"{type(node).__name__.lower()} on '{wide.name}', a tensor with an int64 "
                                    "dimension: the CUDA lowering indexes tile operations in 32 bits; read and write "
                                    "its elements in a T.Parallel loop (64-bit indices) or use int32 dims",
                                    node.span, "lowering-unsupported")


def _launch_of(part, em: KernelEmitter, params: list, source: str) -> dict:
    """One launch of a lowered kernel: its symbol, grid, block, dynamic shared memory and ordered parameters."""
    symbol = f"{_symbol(part.func.name)}_kernel"
    if kernel_signature(source, symbol) is None:
        symbol = kernel_symbol(source) or symbol
    spaces = {b.name for b in part.workspaces}
    for p in params:
        if p["name"] in spaces:
            p["kind"] = "workspace"
    _order_params(params, kernel_signature(source, symbol) or "")
    ws = em.roles.ws
    maps = [dict(m) for m in (ws.tensor_maps if ws else ())]
    _order_params(maps, kernel_signature(source, symbol) or "")
    known = {p["arg"] for p in params + maps}
    unknown = [a.split()[-1] for a in (kernel_signature(source, symbol) or "").split(",")
               if a.strip() and a.split()[-1] not in known]
    if unknown:  # a value the launcher could not pass: refuse here rather than launch with arguments missing
        raise LoweringError(f"the generated kernel takes parameters no launch can pass ({', '.join(unknown)})",
                            part.func.span, "codegen-error")
    grid = tuple(as_int(g) if as_int(g) is not None else expr_str(g) for g in part.func.launch.grid)
    persistent = ws.persistent if ws is not None else None
    if persistent is not None:  # every tile; the launcher caps it at the blocks resident at once
        grid = (persistent.tiles,)
    return {"kernel_symbol": symbol, "grid": grid, "block": (em.block_threads, 1, 1), "smem_bytes": em.shared_memory.total,
            "params": params, "tensor_maps": maps, "cooperative": em.thread_ops.cooperative,
            **({"persistent": True} if persistent is not None else {}),
            **({"cluster": CLUSTER_SIZE} if ws is not None and ws.cluster is not None else {}),
            **({"stream_k": ws.stream_k.step_info(em.threads)} if ws is not None and ws.stream_k else {}),
            **({"l2_persist": hints} if (hints := l2_persisting(part.func)) else {})}


def l2_persisting(func: N.PrimFunc) -> list:
    """The T.annotate_l2_hit_ratio hints of a kernel: [{tensor, hit_ratio}], which the launcher applies as the stream's
    L2 access policy window (one window a launch: the first hint's tensor)."""
    return [{"tensor": c.args[0].buffer.name, "hit_ratio": float(c.args[1].value)} for c in walk(func.body)
            if isinstance(c, N.Call) and c.name == "annotate_l2_hit_ratio"]


def _user_params(params: list) -> list:
    """The arguments a caller passes (workspaces are the launcher's), without kernel positions."""
    return [{k: v for k, v in p.items() if k != "position"} for p in params if p["kind"] != "workspace"]


def _workspaces(parts: list) -> list:
    """The T.alloc_global buffers the launcher allocates (zero-filled), each once, in declaration order."""
    seen: dict = {}
    for part in parts:
        for b in part.workspaces:
            seen.setdefault(b.name, {"name": b.name, "dtype": b.dtype,
                                     "shape": [as_int(d) if as_int(d) is not None else expr_str(d) for d in b.shape]})
    return list(seen.values())


def _prim_func(ns, text: str, T):  # noqa: N803
    """Build the PrimFunc through the IRBuilder (fast); fall back to TVMScript's parser."""
    from .builder import build_prim_func

    try:
        return build_prim_func(text)
    except Exception:  # noqa: BLE001 - the parser gives the better error message
        return ns.tvm.script.from_source(text, extra_vars={"T": T})


def _order_params(params: list, signature: str) -> None:
    """Set each param's position in the kernel signature (TVM orders them by first use), -1 when absent."""
    names = [a.strip().split()[-1] for a in signature.split(",") if a.strip()]
    for p in params:
        p["position"] = names.index(p["arg"]) if p["arg"] in names else -1
