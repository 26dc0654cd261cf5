"""Software-pipeline and shared-memory planning over the tile IR (no tvm).

Before: `for ko in T.Pipelined(n, num_stages=3): T.copy(A[..ko..], A_s); T.copy(B[..], B_s); T.gemm(A_s, B_s, C)`
After: a PipelinePlan per loop: producers [copy A, copy B] (global -> shared, issued num_stages-1
iterations ahead with cp.async into a ring of 3 buffers), consumers [gemm]; plus the set of shared
tiles that are gemm operands and get an XOR-swizzled layout (no bank conflicts for ldmatrix).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..ir import nodes as N
from ..ir.arith import shape_ints
from ..ir.visitor import walk


@dataclass
class PipelinePlan:
    """How one T.Pipelined loop is multi-buffered."""

    loop: N.For
    num_stages: int
    producers: list
    consumers: list
    buffers: list

    def describe(self) -> str:
        names = ", ".join(b.name for b in self.buffers)
        return (f"# pipeline {self.loop.vars[0].name}: {self.num_stages} stages, "
                f"{len(self.producers)} async producer copies ({names}), {len(self.consumers)} consumer statements")


def _flat(stmt) -> list:
    return list(stmt.stmts) if isinstance(stmt, N.SeqStmt) else [stmt]


def _vars_in(node) -> set:
    return {n for n in walk(node) if isinstance(n, N.Var)} | {
        n for x in walk(node) if isinstance(x, (N.Load, N.Store)) for n in ()}


def _region_vars(region: N.Region) -> set:
    out = set()
    for a in region.axes:
        out |= {n for n in walk(a.start) if isinstance(n, N.Var)}
    return out


def _defined_in(body) -> set:
    out = set()
    for n in walk(body):
        if isinstance(n, N.LetStmt):
            out.add(n.var)
        elif isinstance(n, N.For):
            out |= set(n.vars)
    return out


def _writes(func_body, buf) -> list:
    from ..codegen.cuda_tileops import op_regions

    out = []
    for n in walk(func_body):
        if isinstance(n, N.Store) and n.buffer is buf:
            out.append(n)
        elif isinstance(n, N.TILE_OPS) and any(r.buffer is buf for r in op_regions(n)[1]):
            out.append(n)
    return out


def _uses_outside(func_body, loop, buf) -> bool:
    inside = {id(n) for n in walk(loop)}
    for n in walk(func_body):
        if id(n) in inside:
            continue
        if isinstance(n, (N.Load, N.Store)) and n.buffer is buf:
            return True
        if isinstance(n, N.Region) and n.buffer is buf:
            return True
    return False


def plan_pipelines(func: N.PrimFunc) -> dict:
    """{id(loop): PipelinePlan} for every T.Pipelined loop that can be multi-buffered."""
    plans = {}
    for loop in (n for n in walk(func.body) if isinstance(n, N.For) and n.kind == "pipelined"):
        ns = loop.num_stages or 0
        if ns < 2 or len(loop.vars) != 1:
            continue
        stmts = _flat(loop.body)
        local_defs = _defined_in(loop.body)
        producers, consumers, buffers = [], [], []
        for s in stmts:
            if _is_producer(func.body, loop, s, local_defs) and s.dst.buffer not in buffers:
                producers.append(s)
                buffers.append(s.dst.buffer)
            else:
                consumers.append(s)
        if producers:
            plans[id(loop)] = PipelinePlan(loop, ns, producers, consumers, buffers)
    return plans


def _is_producer(body, loop, s, local_defs) -> bool:
    if not isinstance(s, N.Copy):
        return False
    if s.src.buffer.scope != "global" or s.dst.buffer.scope not in ("shared.dyn", "shared"):
        return False
    if _region_vars(s.src) & local_defs or _region_vars(s.dst) & local_defs:
        return False
    if len(_writes(body, s.dst.buffer)) != 1:
        return False
    return not _uses_outside(body, loop, s.dst.buffer)


def swizzled_buffers(func: N.PrimFunc) -> set:
    """Shared 16-bit tiles that feed tensor-core gemms (their 16-byte chunks get XOR-swizzled)."""
    out = set()
    for g in (n for n in walk(func.body) if isinstance(n, N.Gemm)):
        if g.c.buffer.dtype != "float32" or g.b.buffer.dtype != g.a.buffer.dtype:
            continue
        if g.a.buffer.dtype not in ("float16", "bfloat16"):
            continue
        for buf in (g.a.buffer, g.b.buffer):
            shape = shape_ints(buf.shape)
            if buf.scope in ("shared.dyn", "shared") and shape and len(shape) == 2 and shape[1] % 16 == 0:
                out.add(buf)
    return out
