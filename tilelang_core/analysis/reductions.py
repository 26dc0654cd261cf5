"""The shared-memory workspace the CUDA lowering of a kernel's T.reduce_* calls takes (so the checks' estimate
covers it), the warp split of a gemm tile it depends on, and the dtype a reduction accumulates in."""
from __future__ import annotations

from ..ir import nodes as N
from ..ir.arith import as_int, shape_ints
from ..ir.visitor import walk
from .infer import dtype_bits, elements, is_float


def warp_split(policy: str, m: int, n: int, warps: int) -> tuple[int, int] | None:
    """Split `warps` over an MxN gemm tile: FullRow (all on M), FullCol (all on N) or Square (closest to square
    per warp); None when no split gives every warp whole 16x8 mma atoms."""
    if policy == "FullRow" and m % (16 * warps) == 0:
        return warps, 1
    if policy == "FullCol" and n % (8 * warps) == 0:
        return 1, warps
    best = None
    for wm in range(1, warps + 1):
        if warps % wm:
            continue
        wn = warps // wm
        if m % (16 * wm) or n % (8 * wn):
            continue
        score = abs(m / wm - n / wn)
        if best is None or score < best[0]:
            best = (score, wm, wn)
    return None if best is None else (best[1], best[2])


def acc_dtype(op: N.Reduce) -> str:
    """The dtype a reduction accumulates in: float32 for floats (float64 when one side is), the destination's
    integer type for integers (an integer sum or max in float32 loses every bit past 24)."""
    src, dst = op.src.buffer.dtype, op.dst.buffer.dtype
    if "float64" in (src, dst):
        return "float64"
    if is_float(src) or is_float(dst):
        return "float32"
    return dst


SHUFFLED = ("float32", "float64", "int32", "uint32", "int64", "uint64")  # dtypes a warp shuffle moves


def _rows_in_registers(op: N.Reduce, threads: int) -> bool:
    """True when the reduced rows (along the last dim) of a fragment spread evenly over whole warps."""
    shape = shape_ints(op.src.buffer.shape)
    n = elements(op.src.buffer.shape)
    return (shape is not None and n is not None and op.dim == len(shape) - 1 and threads % 32 == 0
            and shape[-1] % threads == 0 and n % threads == 0 and acc_dtype(op) in SHUFFLED)


def workspace_bytes(launch: N.Launch, threads: int) -> int:
    """Bytes of shared scratch the CUDA lowering adds for the reductions of `launch` with `threads` threads: rows of
    a gemm accumulator split over warps along N combine per-warp partials (warps x rows floats, none without
    that split), as do rows along the last dim that spread over whole registers of every thread; any other
    fragment is staged whole with one slot per output element; a shared source needs only the output slots; a
    T.tvm_thread_allreduce other than over threadIdx.x within a warp, one slot per thread. One buffer of each kind and dtype serves every reduction (the largest use)."""
    nodes = list(walk(launch.body))
    split = {}
    for g in (n for n in nodes if isinstance(n, N.Gemm)):
        shape = shape_ints(g.c.buffer.shape)
        if g.c.buffer.scope == "local.fragment" and shape and len(shape) == 2:
            split[g.c.buffer] = (shape[0], warp_split(g.policy, *shape, max(threads // 32, 1)))
    largest: dict = {}
    for op in (n for n in nodes if isinstance(n, N.Reduce)):
        t, src, dst = acc_dtype(op), op.src.buffer, op.dst.buffer
        n_src, n_dst, bits = elements(src.shape), elements(dst.shape), dtype_bits(t)
        if n_src is None or n_dst is None or bits is None:
            continue
        rows, warps = split.get(src, (None, None))
        if rows is not None and op.dim == 1 and t == "float32" and dst.scope == "local.fragment" and (
                shape_ints(dst.shape) in ((rows,), (rows, 1))):
            uses = [("red_warps", warps[1] * rows)] if warps is not None and warps[1] > 1 else []
        elif src.scope == "local.fragment" and _rows_in_registers(op, threads):
            uses = [("red_warps", n_dst * (threads // 32))]
        elif src.scope == "local.fragment":
            uses = [("red_in", n_src), ("red_out", n_dst)]
        else:
            uses = [("red_out", n_dst)]
        for kind, elems in uses:
            largest[(kind, t)] = max(largest.get((kind, t), 0), elems * bits // 8)
    dims = [as_int(t) for t in launch.threads] or [threads]
    for call in (n for n in nodes if isinstance(n, N.Call) and n.name == "thread_allreduce"):
        axis, bits = as_int(call.args[2]), dtype_bits(call.dtype or "float32")
        shuffled = axis == 0 and dims[0] is not None and dims[0] <= 32 and not dims[0] & (dims[0] - 1)
        if not shuffled and bits:
            key = ("allreduce", call.dtype or "float32")
            largest[key] = max(largest.get(key, 0), threads * bits // 8)
    return sum(largest.values())
