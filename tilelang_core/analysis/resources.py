"""Per-block resources of a launch: shared memory (with T.Pipelined multi-buffering), threads and a
register estimate, and the checks that compare them with each target architecture's limits."""
from __future__ import annotations

from dataclasses import dataclass, field

from ..diagnostics import Related
from ..ir import nodes as N
from ..ir.arith import as_int
from ..target import gpu_archs
from .index import KernelIndex, peak
from .infer import SHARED_SCOPES, buffer_bytes, dims_str, dtype_bits, elements, kib
from .reductions import workspace_bytes


@dataclass
class Budget:
    """What one block of a launch needs: shared memory per buffer and stage, threads, registers."""

    shared: list = field(default_factory=list)  # (Buffer, bytes per stage | None, stages)
    threads: int | None = None
    registers: int | None = None
    fragments: list = field(default_factory=list)  # Buffers in local.fragment / local / local.var
    live: dict = field(default_factory=dict)  # Buffer -> (first, last) use position
    workspace: int = 0  # bytes of the reductions' shared scratch (reductions.workspace_bytes), live throughout

    def smem_total(self, max_stages: int | None = None) -> int | None:
        """Peak shared bytes per block over buffers live together, with the reductions' workspace; `max_stages`
        caps stage counts."""
        sizes = {}
        for buf, nbytes, stages in self.shared:
            if nbytes is None:
                return None
            sizes[buf] = nbytes * (stages if max_stages is None else min(stages, max_stages))
        return peak(sizes, self.live) + self.workspace

    def live_together(self, buf_a, buf_b) -> bool:
        """True when two shared buffers are live at the same time (so they cannot share memory)."""
        a, b = self.live.get(buf_a), self.live.get(buf_b)
        return a is not None and b is not None and a[0] <= b[1] and b[0] <= a[1]

    @property
    def breakdown(self) -> list[tuple[str, int | None, int]]:
        """(buffer name, bytes per stage, stages) for each shared buffer."""
        return [(b.name, n, s) for b, n, s in self.shared]

    @property
    def num_stages(self) -> int:
        """The largest stage count of any shared buffer (1 without pipelining)."""
        return max((s for _, _, s in self.shared), default=1)


def block_threads(launch: N.Launch) -> int | None:
    """The block's constant thread count (TileLang's default 128 when T.Kernel names none; None when unknown)."""
    if not launch.threads:
        return 128
    total = 1
    for t in launch.threads:
        v = as_int(t)
        if v is None:
            return None
        total *= v
    return total


def budget(launch: N.Launch, ix: KernelIndex) -> Budget:
    """Compute the per-block budget of one launch from the kernel's index."""
    b = Budget(threads=block_threads(launch))
    stages = ix.stages
    for node in ix.allocations.get(id(launch), ()):
        buf = node.buffer
        if buf.scope in SHARED_SCOPES:
            n, _loop = stages.get(buf, (1, None))
            b.shared.append((buf, buffer_bytes(buf), n))
        elif buf.scope in ("local.fragment", "local", "local.var"):
            b.fragments.append(buf)
    b.registers = _registers(b.fragments, b.threads)
    b.workspace = workspace_bytes(launch, b.threads) if b.threads else 0
    b.live = {buf: ix.live[buf] for buf, _, _ in b.shared if buf in ix.live}
    return b


def _registers(bufs, threads: int | None) -> int | None:
    """Estimated 32-bit registers per thread for fragments (spread over threads) and locals (per thread)."""
    if not threads:
        return None
    regs = 0.0
    for buf in bufs:
        n, bits = elements(buf.shape), dtype_bits(buf.dtype)
        if n is None or bits is None:
            return None
        if buf.scope == "local.fragment":
            regs += n * bits / 32 / threads
        else:
            regs += n * max(bits, 32) / 32
    return int(-(-regs // 1))


# ---------------------------------------------------------------------------------------------
# checks


def check_launch(launch: N.Launch, b: Budget, targets, ctx) -> None:
    """Threads, register and shared-memory checks for one launch."""
    _check_threads(launch, b, ctx)
    _check_grid(launch, ctx)
    _check_registers(launch, b, ctx)
    for lim in gpu_archs(targets):
        _check_smem(launch, b, lim, ctx)


def _threads_span(launch: N.Launch):
    spans = [t.span for t in launch.threads if getattr(t, "span", None) is not None]
    return spans[0] if len(spans) == 1 else launch.span


_GRID_LIMITS = (2**31 - 1, 65535, 65535)  # gridDim.x, .y, .z (CUDA Programming Guide, same table)


def _check_grid(launch: N.Launch, ctx) -> None:
    for axis, (g, limit) in enumerate(zip(launch.grid, _GRID_LIMITS)):
        n = as_int(g)
        if n is None or n <= limit:
            continue
        var = launch.block_vars[axis].name if axis < len(launch.block_vars) else "xyz"[axis]
        ctx.emit("grid-exceeded",
                 f"T.Kernel grid dimension {axis + 1} ({var}) is {n} blocks, over CUDA's limit of {limit} for "
                 f"blockIdx.{'xyz'[axis]}; put the largest extent first (blockIdx.x allows 2^31 - 1) or loop "
                 f"over the rest inside the kernel", getattr(g, "span", None) or launch.span)


def _check_threads(launch: N.Launch, b: Budget, ctx) -> None:
    if b.threads is None:
        return
    z = as_int(launch.threads[2]) if len(launch.threads) == 3 else None
    if b.threads > 1024:
        ctx.emit("threads-exceeded",
                 f"T.Kernel uses {b.threads} threads per block, over the hardware limit of 1024; use at most "
                 f"1024 (e.g. threads=256) and give each thread more work", _threads_span(launch))
    elif z is not None and z > 64:
        ctx.emit("threads-exceeded",
                 f"T.Kernel's third thread dimension is {z}, over CUDA's limit of 64 for blockDim.z; put the "
                 f"larger extent first (threads=({z}, ...))", _threads_span(launch))
    elif b.threads % 32 and b.threads != 1:  # threads=1 is the deliberate single-thread (scalar) kernel
        up = -(-b.threads // 32) * 32
        ctx.emit("threads-not-warp-multiple",
                 f"T.Kernel uses {b.threads} threads per block, not a multiple of the warp size 32; the last "
                 f"warp runs partly idle and tile ops assume whole warps: use threads={up}",
                 _threads_span(launch))


def _check_registers(launch: N.Launch, b: Budget, ctx) -> None:
    if b.registers is None or b.registers <= 255:
        return
    frags = sorted(b.fragments, key=lambda x: -(buffer_bytes(x) or 0))
    parts = ", ".join(f"{x.name} {dims_str(x.shape)} {x.dtype}" for x in frags[:3])
    rel = tuple(Related(x.span, f"{x.name} allocated here") for x in frags[1:3] if x.span)
    if launch.span is not None:
        rel += (Related(launch.span, f"{b.threads} threads per block"),)
    ctx.emit("register-pressure",
             f"fragments and locals need about {b.registers} registers per thread with {b.threads} threads "
             f"({parts}), over the 255 a thread can hold; the rest spills to local memory: use more threads "
             f"or smaller tiles", frags[0].span or launch.span, related=rel)


def _check_smem(launch: N.Launch, b: Budget, lim, ctx) -> None:
    total = b.smem_total()
    if total is None or total <= lim.smem_per_block:
        return
    n = b.num_stages
    fit = _max_stages_that_fit(b, lim.smem_per_block)
    parts = "; ".join(_part(buf, nbytes, s) for buf, nbytes, s in b.shared if nbytes)
    tiles = _tile_names(ctx.func, b)
    if fit:
        advice = f"lower num_stages to {fit} or shrink {tiles}"
    else:
        advice = f"shrink {tiles}" + (" and num_stages" if n > 1 else "")
    if b.workspace:
        parts += f"; reductions' workspace {kib(b.workspace)}"
    naive = sum(nb * s for _, nb, s in b.shared if nb) + b.workspace
    if naive > total:
        parts += f" (buffers used one after another share memory; {kib(total)} is the peak of those live together)"
    rel = tuple(Related(buf.span, f"{buf.name}: " + (f"{kib(nb)} × {s} stages = {kib(nb * s)}" if s > 1 else kib(nb)))
                for buf, nb, s in b.shared if buf.span and nb)
    ctx.emit("shared-memory-exceeded",
             f"shared memory per block is {kib(total)} ({total} B) for {lim.name}, over its "
             f"{kib(lim.smem_per_block)} ({lim.smem_per_block} B) limit: {parts}; {advice}",
             launch.span, related=rel, target=lim.name,
             data={"max_stages_that_fit": fit, "num_stages": n, "target": lim.name, "bytes": total,
                   "limit": lim.smem_per_block})


def _max_stages_that_fit(b: Budget, limit: int) -> int:
    """The largest stage count below num_stages whose footprint fits (0: none); a bisection, since the
    footprint grows with the stage count and num_stages may be huge."""
    lo, hi = 0, b.num_stages - 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if b.smem_total(mid) <= limit:
            lo = mid
        else:
            hi = mid - 1
    return lo


def _tile_names(func: N.PrimFunc, b: Budget) -> str:
    """The factory's block-size arguments most shared tiles are built from ('block_K'), else 'the tiles'."""
    dims = [as_int(d) for buf, nb, s in b.shared if nb for d in buf.shape]
    counts = {name: dims.count(v) for name, v in func.bindings
              if name.startswith("block") and isinstance(v, int) and not isinstance(v, bool) and v in dims}
    if not counts:
        return "the tiles (block sizes)"
    top = max(counts.values())
    names = [n for n, c in counts.items() if c == top]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _part(buf, nbytes: int, stages: int) -> str:
    s = f"{buf.name} {dims_str(buf.shape)} {buf.dtype} {kib(nbytes)}"
    return s + (f" × {stages} stages" if stages > 1 else "")
