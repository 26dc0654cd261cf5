"""Fragments read across layouts and tensors made from pointers, the constructs that kept corpus files from
lowering: T.reduce_* over a 3-D fragment (deepseek_mhc/example_mhc_bwd), T.copy of a slice of a replicated
fragment and between fragments of different layouts (flash_decoding/example_mha_inference), a T.Parallel loop that
reads gemm accumulator columns other threads hold (deepseek_mhc/example_mhc_pre), and T.make_tensor over a T.ptr
table (grouped_gemm/example_grouped_gemm_fwd_ptr)."""
from __future__ import annotations

from fuzz_harness import Case

REDUCE_3D = """
@T.prim_func
def k(R: T.Tensor((4, 16, 16), "float32"), X: T.Tensor((4, 16), "float32"), Y1: T.Tensor((4, 16), "float32"),
      Y2: T.Tensor((4, 16), "float32")):
    with T.Kernel(1, threads=64) as _:
        r = T.alloc_fragment((4, 16, 16), "float32")
        x = T.alloc_fragment((4, 16), "float32")
        buf = T.alloc_fragment((4, 16, 16), "float32")
        y1 = T.alloc_fragment((4, 16), "float32")
        y2 = T.alloc_fragment((4, 16), "float32")
        T.copy(R, r)
        T.copy(X, x)
        for a, i, j in T.Parallel(4, 16, 16):
            buf[a, i, j] = r[a, i, j] * x[a, j]
        T.reduce_sum(buf, y1, dim=-1)
        T.reduce_max(buf, y2, dim=-2)
        T.copy(y1, Y1)
        T.copy(y2, Y2)
"""

SLICE_COPY = """
@T.prim_func
def k(L: T.Tensor((4, 128), "float32"), O: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as _:
        lse = T.alloc_fragment((4, 128), "float32")
        row = T.alloc_fragment((128,), "float32")
        acc = T.alloc_fragment((128,), "float32")
        T.copy(L, lse)
        T.clear(acc)
        for s in T.serial(4):
            T.copy(lse[s, :], row)
            for i in T.Parallel(128):
                acc[i] += row[i] * (s + 1)
        T.copy(acc, O)
"""

GEMM_COLUMNS = """
@T.prim_func
def k(A: T.Tensor((64, 32), "float16"), B: T.Tensor((64, 32), "float16"), S: T.Tensor((64, 4), "float32"),
      D: T.Tensor((64, 64), "float32")):
    with T.Kernel(1, threads=128) as _:
        a_s = T.alloc_shared((64, 32), "float16")
        b_s = T.alloc_shared((64, 32), "float16")
        c = T.alloc_fragment((64, 64), "float32")
        g = T.alloc_fragment((64, 64), "float32")
        part = T.alloc_fragment((64, 4), "float32")
        T.copy(A, a_s)
        T.copy(B, b_s)
        T.gemm(a_s, b_s, c, transpose_B=True, clear_accum=True)
        T.clear(part)
        for jj in T.serial(16):
            for i, j in T.Parallel(64, 4):
                part[i, j] += c[i, jj * 4 + j] * c[i, jj * 4 + j]
        for i, j in T.Parallel(64, 64):
            g[i, j] = 0.0
        T.copy(c[0:64, 0:32], g[0:64, 32:64])
        T.copy(part, S)
        T.copy(g, D)
"""

POINTER_TABLE = """
@T.prim_func
def k(ptrs: T.Tensor([3], T.ptr), A: T.Tensor((3, 16, 32), "float16"), scale: T.Tensor([3], "float32"),
      O: T.Tensor((3, 16, 32), "float32")):
    with T.Kernel(3, threads=128) as bx:
        g = T.alloc_var(dtype=T.int32)
        g = bx
        X = T.make_tensor(ptrs[g], (16, 32), "float16")
        x_s = T.alloc_shared((16, 32), "float16")
        acc = T.alloc_fragment((16, 32), "float32")
        T.copy(X, x_s)
        T.copy(x_s, acc)
        for i, j in T.Parallel(16, 32):
            acc[i, j] = acc[i, j] * scale[g]
        T.copy(acc, O[bx, :, :])
"""

REPLICATED_WRITE = """
@T.prim_func
def k(L: T.Tensor((128,), "float32"), P: T.Tensor((128, 64), "float32"), O: T.Tensor((128, 64), "float32")):
    with T.Kernel(1, threads=64) as _:
        lse = T.alloc_fragment((128,), "float32")
        sc = T.alloc_fragment((128,), "float32")
        p = T.alloc_fragment((128, 64), "float32")
        T.copy(L, lse)
        T.copy(P, p)
        T.fill(sc, 1.0)
        for i in T.Parallel(128):
            if i % 3 != 0:
                sc[i] = T.exp2(lse[i] * 0.5)
        for i, j in T.Parallel(128, 64):
            p[i, j] = p[i, j] * sc[i]
        T.copy(p, O)
"""

SAFE_GATHER = """
@T.prim_func
def k(Idx: T.Tensor((64,), "int32"), P: T.Tensor((64,), "int32"), X: T.Tensor((32, 16), "float32"),
      O: T.Tensor((64, 16), "float32"), O2: T.Tensor((48, 16), "float32"), H: T.Tensor((32,), "float32")):
    with T.Kernel(1, threads=128) as _:
        for i, j in T.Parallel(64, 16):
            O[i, j] = X[Idx[i], j] + 1.0
            O2[P[i], j] = 2.0
        for i in T.Parallel(64):
            T.atomic_add(H[Idx[i]], 1.0)
"""


def _randn(*shapes, half=()):
    def make(device):
        import torch

        g = torch.Generator().manual_seed(0)
        return [torch.randn(*s, generator=g).to(torch.float16 if k in half else torch.float32).to(device)
                for k, s in enumerate(shapes)]
    return make


def _reduce_3d_ref(args):
    buf = args[0] * args[1][:, None, :]
    return [buf.sum(-1), buf.amax(-2)]


def _gemm_columns_ref(args):
    import torch

    c = args[0].float() @ args[1].float().T
    d = torch.zeros(64, 64)
    d[:, 32:] = c[:, :32]
    return [(c * c).reshape(64, 16, 4).sum(1), d]


def _replicated_write_ref(args):
    import torch

    sc = torch.where(torch.arange(128) % 3 != 0, torch.exp2(args[0] * 0.5), torch.ones(128))
    return [args[1] * sc[:, None]]


def _safe_gather_inputs(device):
    import torch

    g = torch.Generator().manual_seed(0)
    idx = torch.randint(-8, 40, (64,), generator=g, dtype=torch.int32)
    return [t.to(device) for t in (idx, torch.randperm(64, generator=g).to(torch.int32),
                                   torch.randn(32, 16, generator=g), torch.zeros(64, 16), torch.zeros(48, 16),
                                   torch.zeros(32))]


def _safe_gather_ref(args):
    import torch

    idx, x = args[0].long(), args[2]
    rows = torch.where(((idx >= 0) & (idx < 32))[:, None], x[idx.clamp(0, 31)], torch.zeros(16))
    valid = idx[(idx >= 0) & (idx < 32)]
    return [rows + 1.0, torch.full((48, 16), 2.0), torch.bincount(valid, minlength=32).float()]


def _pointer_inputs(device):
    import torch

    g = torch.Generator().manual_seed(0)
    a = torch.randn(3, 16, 32, generator=g).half().to(device)
    table = torch.tensor([a[k].data_ptr() for k in range(3)], dtype=torch.int64, device=device)
    return [table, a, torch.tensor([0.5, 2.0, -1.0], device=device), torch.zeros(3, 16, 32, device=device)]


CASES = [
    Case("T.reduce_sum / reduce_max over a 3-D fragment (dim -1 and -2)", "corpus: deepseek_mhc/example_mhc_bwd",
         REDUCE_3D, _randn((4, 16, 16), (4, 16), (4, 16), (4, 16)), _reduce_3d_ref, outputs=(2, 3), rtol=1e-5,
         atol=1e-5),
    Case("T.copy of a slice of a replicated fragment into a 1-D fragment", "corpus: flash_decoding/example_mha_inference",
         SLICE_COPY, _randn((4, 128), (128,)), lambda a: [(a[0] * __import__("torch").arange(1, 5)[:, None]).sum(0)],
         rtol=1e-5, atol=1e-5),
    Case("gemm accumulator columns read in a T.Parallel by other threads; a slice copy between fragments",
         "corpus: deepseek_mhc/example_mhc_pre", GEMM_COLUMNS, _randn((64, 32), (64, 32), (64, 4), (64, 64),
                                                                       half=(0, 1)),
         _gemm_columns_ref, outputs=(2, 3), rtol=1e-3, atol=1e-3),
    Case("a replicated fragment written (conditionally) by a T.Parallel loop that a distributed fragment drives",
         "corpus: flash_decoding/example_mha_inference (each thread set only its own row of scale_local on the H200)",
         REPLICATED_WRITE, _randn((128,), (128, 64), (128, 64)), _replicated_write_ref, rtol=1e-5, atol=1e-5),
    Case("global element reads and writes outside the tensor: reads give 0, writes are skipped",
         "corpus: deepseek_v32/sparse_mla_fwd (index == seq_len_kv pads the top-k list; TileLang's "
         "LegalizeSafeMemoryAccess reads it as 0; an unguarded read pulled NaNs into the H200's output)",
         SAFE_GATHER, _safe_gather_inputs, _safe_gather_ref, outputs=(3, 4, 5)),
    Case("T.make_tensor over a T.ptr table", "corpus: grouped_gemm/example_grouped_gemm_fwd_ptr", POINTER_TABLE,
         _pointer_inputs, lambda a: [a[1].float() * a[2][:, None, None]], rtol=1e-3, atol=1e-3),
]
