"""T.gemm patterns the real TileLang got wrong: clear_accum with A in registers, a run-time clear_accum (k == 0),
N tiles that are 8 mod 16, int8 inputs, sibling pipelined loops with different stage counts, and a K tile that is
not a multiple of the MMA K (refused with a message here, silently truncated upstream)."""
from __future__ import annotations

from fuzz_harness import Case

GEMM = """
@T.prim_func
def k(A: T.Tensor(({m}, {k}), "{dt}"), B: T.Tensor(({k}, {n}), "{dt}"), C: T.Tensor(({m}, {n}), "{acc}")):
    with T.Kernel(1, threads=128) as _:
        a = T.alloc_shared(({m}, {k}), "{dt}")
        b = T.alloc_shared(({k}, {n}), "{dt}")
        c = T.alloc_fragment(({m}, {n}), "{acc}")
        T.copy(A, a)
        T.copy(B, b)
        T.gemm(a, b, c, clear_accum=True)
        T.copy(c, C)
"""

RS_CLEAR = """
@T.prim_func
def k(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as _:
        a_s = T.alloc_shared((64, 64), "float16")
        a = T.alloc_fragment((64, 64), "float16")
        b = T.alloc_shared((64, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.copy(A, a_s)
        T.copy(a_s, a)
        T.copy(B, b)
        T.fill(c, 5.0)
        T.gemm(a, b, c, clear_accum=True, policy=T.GemmWarpPolicy.FullRow)
        T.copy(c, C)
"""

RUNTIME_CLEAR = """
@T.prim_func
def k(A: T.Tensor((64, 128), "float16"), B: T.Tensor((128, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as _:
        a = T.alloc_shared((64, 32), "float16")
        b = T.alloc_shared((32, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.fill(c, 100.0)
        for ko in T.Pipelined(4, num_stages=2):
            T.copy(A[0, ko * 32], a)
            T.copy(B[ko * 32, 0], b)
            T.gemm(a, b, c, clear_accum=ko == 0)
        T.copy(c, C)
"""

SIBLING_PIPELINES = """
@T.prim_func
def k(A: T.Tensor((64, 128), "float16"), B: T.Tensor((128, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as _:
        a = T.alloc_shared((64, 32), "float16")
        b = T.alloc_shared((32, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.clear(c)
        for ko in T.Pipelined(2, num_stages=2):
            T.copy(A[0, ko * 32], a)
            T.copy(B[ko * 32, 0], b)
            T.gemm(a, b, c)
        for ko in T.Pipelined(2, num_stages=1):
            T.copy(A[0, 64 + ko * 32], a)
            T.copy(B[64 + ko * 32, 0], b)
            T.gemm(a, b, c)
        T.copy(c, C)
"""


def _ab(m, k, n, dt="float16", acc="float32"):
    def make(device):
        import torch

        g = torch.Generator().manual_seed(17)
        if dt == "int8":
            a = torch.randint(-8, 8, (m, k), generator=g, dtype=torch.int8)
            b = torch.randint(-8, 8, (k, n), generator=g, dtype=torch.int8)
        else:
            a, b = (torch.randn(s, generator=g).to(getattr(torch, dt)) for s in ((m, k), (k, n)))
        return [a.to(device), b.to(device), torch.zeros(m, n, dtype=getattr(torch, acc), device=device)]
    return make


def _matmul(args):
    import torch

    a, b = args[0], args[1]
    if a.dtype == torch.int8:
        return (a.to(torch.int64) @ b.to(torch.int64)).to(torch.int32)
    return a.float() @ b.float()


CASES = [
    Case("clear_accum with A in registers (RS gemm) zeroes the old accumulator", "tile-ai/tilelang#2617, #2627",
         RS_CLEAR, _ab(64, 64, 64), _matmul, atol=1e-2, rtol=1e-3),
    Case("run-time clear_accum=k == 0 in a pipelined K loop", "corpus aws/gemm.py", RUNTIME_CLEAR, _ab(64, 128, 64),
         _matmul, atol=1e-2, rtol=1e-3),
    Case("gemm with an N tile of 40 (8 mod 16)", "tile-ai/tilelang#2593", GEMM.format(m=64, k=32, n=40,
         dt="float16", acc="float32"), _ab(64, 32, 40), _matmul, atol=1e-2, rtol=1e-3),
    Case("int8 gemm into int32", "tile-ai/tilelang#3004", GEMM.format(m=64, k=32, n=64, dt="int8", acc="int32"),
         _ab(64, 32, 64, "int8", "int32"), _matmul),
    Case("sibling pipelined loops sharing tiles with different num_stages", "tile-ai/tilelang#2309",
         SIBLING_PIPELINES, _ab(64, 128, 64), _matmul, atol=1e-2, rtol=1e-3),
    Case("fp16 gemm with a K tile of 24", "tile-ai/tilelang#2381", GEMM.format(m=64, k=24, n=64, dt="float16",
         acc="float32"), _ab(64, 24, 64), _matmul, atol=1e-2, rtol=1e-3, cuda=False,
         note="CUDA refuses K=24 with 'gemm K=24 must be a multiple of 16 for tensor cores' (upstream silently "
              "dropped the K tail); the CPU backend computes it"),
]

TILE_PART = """
@T.prim_func
def k(A: T.Tensor((64, 128), "float16"), B: T.Tensor((128, 64), "float16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=256) as _:
        a = T.alloc_shared((64, 128), "float16")
        b = T.alloc_shared((128, 64), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        T.copy(A, a)
        T.copy(B, b)
        T.gemm(a[:, 64:128], b[0:64, :], c, clear_accum=True)
        T.copy(c, C)
"""


def _two_operands(shape_a: tuple, shape_b: tuple, dtype: str, seed: int):
    """inputs(device) of a gemm case: two random operands and a NaN-filled 64x64 float32 output."""

    def inputs(device):
        import torch

        g = torch.Generator().manual_seed(seed)
        a = torch.randn(*shape_a, generator=g).to(getattr(torch, dtype)).to(device)
        b = torch.randn(*shape_b, generator=g).to(getattr(torch, dtype)).to(device)
        return [a, b, torch.full((64, 64), float("nan"), device=device)]
    return inputs


CASES.append(Case("gemm on a part of a shared tile (columns 64.. of A, rows ..64 of B) reads that part only",
                  "sparse_mla_fwd's Q_s[:, :D]", TILE_PART, _two_operands((64, 128), (128, 64), "float16", 7),
                  lambda args: args[0][:, 64:].float() @ args[1][:64, :].float(), atol=1e-2, rtol=1e-2))

MLA_PARTS = """
@T.prim_func
def k(Q: T.Tensor((64, 576), "bfloat16"), K: T.Tensor((64, 576), "bfloat16"), C: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=256) as _:
        q = T.alloc_shared((64, 576), "bfloat16")
        kv = T.alloc_shared((64, 512), "bfloat16")
        kt = T.alloc_shared((64, 64), "bfloat16")
        c = T.alloc_fragment((64, 64), "float32")
        T.copy(Q[:, :512], q[:, :512])
        T.copy(Q[:, 512:], q[:, 512:])
        T.copy(K[:, :512], kv)
        T.copy(K[:, 512:], kt)
        T.clear(c)
        T.gemm(q[:, :512], kv, c, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
        T.gemm(q[:, 512:], kt, c, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
        T.copy(c, C)
"""


CASES.append(Case("gemm on the head and tail columns of a 576-wide swizzled bf16 tile (sparse MLA's Q_s[:, :D])",
                  "deepseek_v32/sparse_mla_fwd", MLA_PARTS, _two_operands((64, 576), (64, 576), "bfloat16", 11),
                  lambda args: args[0].float() @ args[1].float().T, atol=0.1, rtol=1e-2))
