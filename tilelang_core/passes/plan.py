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
from ..ir.visitor import op_regions, walk
from ..options import current_options
from ..target import WGMMA, parse_target


@dataclass
class PipelinePlan:
    """How one T.Pipelined loop is multi-buffered."""

    loop: N.For
    num_stages: int
    producers: list
    consumers: list
    buffers: list

    @property
    def lone_gemm(self):
        """The loop body's gemm when it is the only consumer statement, else None."""
        only = self.consumers[0] if len(self.consumers) == 1 else None
        return only if isinstance(only, N.Gemm) else None

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


def _mat(buf):
    """(rows, cols) of a gemm operand's matrices: a 2-D tile, or the last two axes of a stacked one (K_s[stage])."""
    shape = shape_ints(buf.shape)
    return tuple(shape[-2:]) if shape and len(shape) >= 2 else None


def wgmma_gemms(func: N.PrimFunc, arch: str, threads: int, roles=None, f16_accumulator: bool = False) -> dict:
    """{id(gemm): Gemm} for the gemms that lower to Hopper wgmma (a target with wgmma, fp16/bf16/fp8 inputs, fp32 accumulator,
    warpgroups along M, B in shared memory in a layout wgmma can describe). `roles` (passes.roles.Roles): a
    gemm inside a thread role runs on the role's warp groups, which must be whole ones. `f16_accumulator`: also a
    float16 accumulator of fp16/fp8 inputs, which wgmma has (and TileLang takes) but our CUDA lowering does not."""
    if not parse_target(arch).has(WGMMA) or not current_options().wgmma:
        return {}
    out = {}
    for g in (n for n in walk(func.body) if isinstance(n, N.Gemm)):
        first, count = (roles.range_of(g) if roles is not None else None) or (0, threads)
        if first % 128 or count % 128:
            continue
        n_wg = count // 128
        a, b, c = g.a.buffer, g.b.buffer, g.c.buffer
        cs, bs = _mat(c), _mat(b)
        f16_ok = f16_accumulator and c.dtype == "float16" and a.dtype != "bfloat16"
        if c.scope != "local.fragment" or (c.dtype != "float32" and not f16_ok) or cs is None or bs is None:
            continue
        if not _wgmma_inputs(g) or g.transpose_a:
            continue
        if b.scope not in ("shared.dyn", "shared"):
            continue
        m, n = cs
        k = bs[1] if g.transpose_b else bs[0]
        if m % (64 * n_wg) or n % 8 or n > 256 or k * _esize(a) % 32:
            continue
        if not (_kmajor_ok(bs[1] * _esize(b)) if g.transpose_b else bs[1] % 64 == 0):
            continue
        if a.scope in ("shared.dyn", "shared"):
            if _mat(a) is None or not _kmajor_ok(_mat(a)[1] * _esize(a)):
                continue
        elif a.scope != "local.fragment":
            continue
        out[id(g)] = g
    return out


FP8 = ("float8_e4m3fn", "float8_e4m3", "float8_e5m2")


def _wgmma_inputs(g) -> bool:
    """fp16 or bf16 pairs; fp8 (e4m3 / e5m2, mixed too) only K-major in shared memory: A in a shared tile and B
    given N x K (transpose_B=True) — fp8 wgmma reads neither a transposed B nor A from registers of this layout.
    A fp8 gemm with B as K x N keeps the FMA gemm (transpose B to N x K for tensor cores)."""
    a, b = g.a.buffer, g.b.buffer
    if a.dtype in ("float16", "bfloat16"):
        return a.dtype == b.dtype
    return a.dtype in FP8 and b.dtype in FP8 and bool(g.transpose_b) and a.scope in ("shared.dyn", "shared")


def fp8_gemm_notes(func: N.PrimFunc, arch: str, wgmma: dict) -> str:
    """IR-stage lines saying what each fp8 T.gemm lowers to on `arch` (wgmma m64nNk32, or the FMA gemm and why)."""
    out = []
    for g in (n for n in walk(func.body) if isinstance(n, N.Gemm) and n.a.buffer.dtype in FP8):
        line = f"\n# fp8 T.gemm (line {g.span.line if g.span else '?'}): "
        if id(g) in wgmma:
            n = _mat(g.c.buffer)[1]
            out.append(line + f"wgmma m64n{n}k32 {g.a.buffer.dtype} x {g.b.buffer.dtype}, both operands K-major")
        elif parse_target(arch).has(WGMMA) and not g.transpose_b:
            out.append(line + "FMA gemm: fp8 wgmma reads B only K-major; store B as N x K and pass transpose_B=True")
        elif parse_target(arch).has(WGMMA):
            out.append(line + "FMA gemm: wgmma needs A in shared memory, 64 rows of C per warpgroup of the block, "
                       "N <= 256 and K tiles of 32/64 bytes or whole 128-byte atoms")
        else:
            out.append(line + f"FMA gemm (no fp8 tensor-core path for {arch})")
    return "".join(out)


def _esize(buf) -> int:
    """Bytes per element of a wgmma operand (1 for fp8, 2 for fp16 / bf16)."""
    return 1 if buf.dtype in FP8 else 2


def _kmajor_ok(row_bytes: int) -> bool:
    """A K-major row of this many bytes is one of wgmma's swizzle widths (32 / 64 bytes) or whole 128-byte atoms."""
    return row_bytes in (32, 64) or row_bytes % 128 == 0


def shared_layouts(func: N.PrimFunc, arch: str = "sm_80", threads: int = 128, wgmma: dict | None = None) -> dict:
    """{shared Buffer: "atoms" | "rows"} for tiles that feed tensor-core gemms.

    "rows": 16-byte chunks XOR-swizzled within each row (ldmatrix bank-conflict free; for rows of 32 or 64
    bytes also wgmma's 32B/64B swizzle); "atoms": the tile stored as [cols/w][rows][w] with the 128-byte
    swizzle (w = 64 fp16 or 128 fp8 columns), the canonical layout wgmma descriptors address. `wgmma`: the gemms
    lowered to wgmma (default: every one that qualifies, see `wgmma_gemms`). fp8 tiles get a layout only for wgmma.
    """
    wg = wgmma_gemms(func, arch, threads) if wgmma is None else wgmma
    out: dict = {}
    for g in (n for n in walk(func.body) if isinstance(n, N.Gemm)):
        if g.c.buffer.dtype != "float32" or not (id(g) in wg or g.b.buffer.dtype == g.a.buffer.dtype in (
                "float16", "bfloat16")):  # fp8 tiles are laid out for wgmma only
            continue
        for buf in (g.a.buffer, g.b.buffer):
            shape = _mat(buf)
            if buf.scope not in ("shared.dyn", "shared") or shape is None or shape[1] * _esize(buf) % 32:
                continue
            kind = "atoms" if id(g) in wg and shape[1] * _esize(buf) % 128 == 0 else "rows"
            if out.get(buf, kind) != kind:
                raise ValueError(f"shared tile '{buf.name}' feeds gemms that need different layouts")
            out[buf] = kind
    return out


def swizzled_buffers(func: N.PrimFunc) -> set:
    """Shared 16-bit tiles that feed tensor-core gemms (their 16-byte chunks get XOR-swizzled)."""
    return set(shared_layouts(func))
