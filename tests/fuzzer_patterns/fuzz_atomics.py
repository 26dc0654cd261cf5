"""Atomics the real TileLang got wrong, and one we got wrong on an H200: an atomic inside a T.Parallel loop over
a replicated fragment ran on every thread (each column received 128x its sum)."""
from __future__ import annotations

from fuzz_harness import Case

COLSUM = """
@T.prim_func
def colsum(A: T.Tensor((256, 128), "float32"), S: T.Tensor((128,), "float32")):
    with T.Kernel(4, threads=128) as bx:
        tile = T.alloc_fragment((64, 128), "float32")
        part = T.alloc_fragment((128,), "float32")
        T.copy(A[bx * 64, 0], tile)
        T.reduce_sum(tile, part, dim=0)
        for j in T.Parallel(128):
            T.atomic_add(S[j], part[j])
"""

COLSUM_TILE = """
@T.prim_func
def colsum_tile(A: T.Tensor((256, 128), "float32"), S: T.Tensor((2, 128), "float32")):
    with T.Kernel(4, threads=128) as bx:
        tile = T.alloc_fragment((64, 128), "float32")
        part = T.alloc_fragment((128,), "float32")
        T.copy(A[bx * 64, 0], tile)
        T.reduce_sum(tile, part, dim=0)
        T.atomic_add(S[bx % 2, 0:128], part)
"""

ROWSUM_MMA = """
@T.prim_func
def rowsum(A: T.Tensor((128, 32), "float16"), B: T.Tensor((32, 64), "float16"), S: T.Tensor((64,), "float32")):
    with T.Kernel(2, threads=128) as bx:
        a_s = T.alloc_shared((64, 32), "float16")
        b_s = T.alloc_shared((32, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        rows = T.alloc_fragment((64,), "float32")
        T.copy(A[bx * 64, 0], a_s)
        T.copy(B, b_s)
        T.gemm(a_s, b_s, c, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
        T.reduce_sum(c, rows, dim=1)
        for i in T.Parallel(64):
            T.atomic_add(S[i], rows[i])
"""

HIST = """
@T.prim_func
def hist(A: T.Tensor((1024,), "{dt}"), S: T.Tensor((4,), "{dt}")):
    with T.Kernel(4, threads=128) as bx:
        for i in T.Parallel(256):
            T.atomic_add(S[i % 4], A[bx * 256 + i])
"""

MINMAX = """
@T.prim_func
def minmax(A: T.Tensor((256,), "{dt}"), S: T.Tensor((4,), "{dt}")):
    with T.Kernel(4, threads=64) as bx:
        for i in T.Parallel(64):
            T.atomic_max(S[0], A[bx * 64 + i])
            T.atomic_min(S[1], A[bx * 64 + i])
        T.atomic_max(S[2], 42.0)
        T.atomic_min(S[3], 7.0)
"""

SPLITK = """
@T.prim_func
def splitk(A: T.Tensor((64, 128), "float16"), B: T.Tensor((128, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, 1, 4, threads=128) as (bx, by, bz):
        a_s = T.alloc_shared((64, 32), "float16")
        b_s = T.alloc_shared((32, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.clear(c)
        T.copy(A[0, bz * 32], a_s)
        T.copy(B[bz * 32, 0], b_s)
        T.gemm(a_s, b_s, c)
        T.atomic_add(C[0, 0], c)
"""


def _randn(*shapes, dtype="float32", zeros=1):
    def make(device):
        import torch

        g = torch.Generator().manual_seed(3)
        dt = getattr(torch, dtype)
        ins = [torch.randn(s, generator=g).to(dt).to(device) for s in shapes[:-zeros]]
        return ins + [torch.zeros(s, device=device) for s in shapes[-zeros:]]
    return make


def _hist_inputs(dt):
    def make(device):
        import torch

        lo, hi = (0, 3) if dt.startswith("u") else (-2, 3)
        g = torch.Generator().manual_seed(5)
        a = torch.randint(lo, hi, (1024,), generator=g).to(getattr(torch, dt))
        return [a.to(device), torch.zeros(4, dtype=a.dtype, device=device)]
    return make


def _minmax_inputs(dt):
    def make(device):
        import torch

        g = torch.Generator().manual_seed(6)
        dtype = getattr(torch, dt)
        if dtype.is_floating_point:
            a = (torch.randn(256, generator=g) * 30).to(dtype)
        else:
            lo, hi = (0, 200) if dt.startswith("u") else (-100, 100)
            a = torch.randint(lo, hi, (256,), generator=g).to(dtype)
        return [a.to(device), torch.tensor([0, 0, 0, 0]).to(dtype).to(device)]
    return make


def _minmax_ref(args):
    import torch

    a, z = args[0], torch.zeros((), dtype=args[0].dtype)
    fixed = torch.tensor([42, 7]).to(a.dtype)
    return torch.stack([torch.maximum(a.max(), z), torch.minimum(a.min(), z),
                        torch.maximum(fixed[0], z), torch.minimum(fixed[1], z)])


def _hist_ref(args):
    import torch

    a = args[0].to(torch.int64)
    return torch.stack([a[k::4].sum() for k in range(4)]).to(args[0].dtype)


CASES = [
    Case("atomic_add in T.Parallel over a reduced (replicated) fragment", "H200 colsum miscompile (ours)", COLSUM,
         _randn((256, 128), (128,)), lambda a: a[0].sum(0), atol=1e-3, rtol=1e-4, tags=("gpu",)),
    Case("atomic_add in T.Parallel over mma row sums (quad-replicated)", "H200 colsum miscompile (ours)",
         ROWSUM_MMA, _randn((128, 32), (32, 64), (64,), dtype="float16"),
         lambda a: (a[0].float() @ a[1].float()).sum(1).view(2, 64).sum(0), atol=1e-2, rtol=1e-3, tags=("gpu",)),
    Case("tile atomic_add of a reduced (replicated) fragment", "H200 colsum miscompile (ours)", COLSUM_TILE,
         _randn((256, 128), (2, 128)), lambda a: a[0].view(2, 2, 64, 128).sum(2).sum(0), atol=1e-3, rtol=1e-4,
         tags=("gpu",)),
    Case("tile atomic_add of a gemm fragment (split-K)", "tile-ai/tilelang#2959", SPLITK,
         _randn((64, 128), (128, 64), (64, 64), dtype="float16"), lambda a: a[0].float() @ a[1].float(),
         atol=1e-2, rtol=1e-3, tags=("gpu",)),
] + [
    Case(f"atomic_add on {dt}", "tile-ai/tilelang#2572", HIST.replace("{dt}", dt), _hist_inputs(dt), _hist_ref,
         tags=("gpu",))
    for dt in ("int16", "uint16", "int8", "uint8", "int32", "int64", "uint32", "float32")
] + [
    Case(f"atomic_max/atomic_min on {dt} (a float literal operand converted first)", "tile-ai/tilelang#2758, #2573",
         MINMAX.replace("{dt}", dt), _minmax_inputs(dt), _minmax_ref, tags=("gpu",))
    for dt in ("float16", "bfloat16", "float32", "int32", "int64", "int16", "uint8")
]
