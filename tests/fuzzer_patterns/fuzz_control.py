"""Loops, branches, copies and fills the real TileLang got wrong: a T.Parallel shorter than its fragment, j % K in a
2-D T.Parallel, merged/unswitched ifs, copy then partial fill of one shared tile, column-padded shared tiles, a
partial 1-D tail copy, a negative int8 fill, an int used as an if condition, a broadcast over a width that is not a
power of two, T.vectorized with a start."""
from __future__ import annotations

from fuzz_harness import Case

SHORT_PARALLEL = """
@T.prim_func
def k(C: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=128) as _:
        f = T.alloc_fragment((256,), "float32")
        for i in T.Parallel(256):
            f[i] = 1.0
        for i in T.Parallel(100):
            f[i] = 5.0
        for i in T.Parallel(256):
            C[i] = f[i] + 1.0
"""

MOD_K = """
@T.prim_func
def k(B: T.Tensor((5,), "float32"), C: T.Tensor((4, 32), "float32")):
    with T.Kernel(1, threads=128) as _:
        for i, j in T.Parallel(4, 32):
            C[i, j] = B[j % 5] + i
"""

MERGE_IF = """
@T.prim_func
def k(A: T.Tensor((1,), "int32"), O: T.Tensor((1,), "int32")):
    with T.Kernel(1, threads=32) as _:
        O[0] = 0
        if A[0] == 0:
            A[0] = 7
        if A[0] == 0:
            O[0] = 1
"""

UNSWITCH = """
@T.prim_func
def k(P: T.Tensor((4,), "int32"), Q: T.Tensor((4,), "int32"), O: T.Tensor((4, 8), "int32")):
    with T.Kernel(4, threads=32) as bx:
        for j in T.serial(8):
            if P[bx] < 2:
                O[bx, j] = 1
            if Q[bx] < 2:
                O[bx, j] = O[bx, j] + 10
"""

COPY_THEN_FILL = """
@T.prim_func
def k(A: T.Tensor((64,), "int32"), B: T.Tensor((64,), "int32")):
    with T.Kernel(1, threads=64) as _:
        s = T.alloc_shared((64,), "int32")
        T.copy(A, s)
        T.fill(s[32:64], 7)
        T.copy(s, B)
"""

PADDED = """
@T.prim_func
def k(A: T.Tensor((32, 32), "float16"), B: T.Tensor((32, 32), "float16")):
    with T.Kernel(1, threads=128) as _:
        s = T.alloc_shared((32, 40), "float16")
        T.copy(A, s[:, 0:32])
        T.copy(s[:, 0:32], B)
"""

TAIL_1D = """
@T.prim_func
def k(A: T.Tensor((1000,), "float16"), B: T.Tensor((1000,), "float16")):
    with T.Kernel(T.ceildiv(1000, 256), threads=128) as bx:
        s = T.alloc_shared((256,), "float16")
        T.copy(A[bx * 256], s)
        T.copy(s, B[bx * 256])
"""

FILL_INT8 = """
@T.prim_func
def k(B: T.Tensor((64,), "int8")):
    with T.Kernel(1, threads=32) as _:
        s = T.alloc_shared((64,), "int8")
        T.fill(s, -3)
        T.copy(s, B)
"""

INT_CONDITION = """
@T.prim_func
def k(A: T.Tensor((8,), "int32"), C: T.Tensor((8,), "int32")):
    with T.Kernel(1, threads=32) as _:
        for i in T.Parallel(8):
            if A[i]:
                C[i] = 1
"""

BROADCAST_48 = """
@T.prim_func
def k(D: T.Tensor((48,), "float32"), X: T.Tensor((16, 48), "float32")):
    with T.Kernel(1, threads=128) as _:
        d = T.alloc_fragment((48,), "float32")
        x = T.alloc_fragment((16, 48), "float32")
        T.copy(D, d)
        for i, j in T.Parallel(16, 48):
            x[i, j] = d[j] * 2.0
        T.copy(x, X)
"""

VECTORIZED_START = """
@T.prim_func
def k(A: T.Tensor((16,), "float32"), C: T.Tensor((16,), "float32")):
    with T.Kernel(1, threads=32) as _:
        for i in T.vectorized(4, 8):
            C[i] = A[i] * 2.0
"""

PERSISTENT = """
@T.prim_func
def k(A: T.Tensor((40, 40), "float32"), B: T.Tensor((40, 40), "float32")):
    with T.Kernel(4, threads=128) as bid:
        for bx, by in T.Persistent([5, 5], 4, bid):
            for i, j in T.Parallel(8, 8):
                B[bx * 8 + i, by * 8 + j] = A[bx * 8 + i, by * 8 + j] + 1.0
"""

WHOLE_BUFFER_ATOMIC = """
@T.prim_func
def k(A: T.Tensor((128,), "int32"), Out: T.Tensor((1,), "int32")):
    with T.Kernel(1, threads=128) as _:
        tid = T.get_thread_binding()
        T.atomic_add(Out, A[tid])
"""


def _make(*specs):
    """Tensors from (values | shape, dtype); shapes get seeded random values."""
    def make(device):
        import torch

        g = torch.Generator().manual_seed(13)
        out = []
        for values, dt in specs:
            dtype = getattr(torch, dt)
            t = (torch.randn(values, generator=g) * 4).to(dtype) if isinstance(values, tuple) else \
                torch.tensor(values).to(dtype)
            out.append(t.to(device))
        return out
    return make


def _vectorized_ref(args):
    out = args[1].clone()
    out[4:8] = args[0][4:8] * 2
    return out


def _unswitch_ref(args):
    import torch

    p, q = args[0], args[1]
    base = torch.where(p < 2, 1, 0)
    return (base + torch.where(q < 2, 10, 0))[:, None].expand(4, 8).to(torch.int32)


CASES = [
    Case("a T.Parallel shorter than its fragment writes only its extent", "tile-ai/tilelang#2957", SHORT_PARALLEL,
         _make(([0.0] * 256, "float32")),
         lambda a: __import__("torch").tensor([6.0] * 100 + [2.0] * 156)),
    Case("B[j % K] in a 2-D T.Parallel with K not dividing N", "tile-ai/tilelang#2955", MOD_K,
         _make(((5,), "float32"), ([[0.0] * 32] * 4, "float32")),
         lambda a: a[0][__import__("torch").arange(32) % 5][None, :] + __import__("torch").arange(4)[:, None]),
    Case("two ifs on the same condition after the first body changes it", "tile-ai/tilelang#2538", MERGE_IF,
         _make(([0], "int32"), ([5], "int32")), lambda a: a[1] * 0, outputs=(1,)),
    Case("two same-form ifs on different buffers stay separate", "tile-ai/tilelang#2539", UNSWITCH,
         _make(([0, 5, 1, 9], "int32"), ([9, 0, 1, 5], "int32"), ([[0] * 8] * 4, "int32")), _unswitch_ref),
    Case("copy into a shared tile, then fill part of it", "tile-ai/tilelang#2698", COPY_THEN_FILL,
         _make(((64,), "int32"), ([0] * 64, "int32")),
         lambda a: __import__("torch").cat([a[0][:32], __import__("torch").full((32,), 7, dtype=a[0].dtype)])),
    Case("copy through a column-padded shared tile keeps its pitch", "tile-ai/tilelang#2581", PADDED,
         _make(((32, 32), "float16"), ([[0.0] * 32] * 32, "float16")), lambda a: a[0]),
    Case("1-D shared -> global copy of a partial last tile", "tile-ai/tilelang#2529", TAIL_1D,
         _make(((1000,), "float16"), ([0.0] * 1000, "float16")), lambda a: a[0]),
    Case("fill an int8 tile with a negative value", "tile-ai/tilelang#2427", FILL_INT8,
         _make(([0] * 64, "int8")), lambda a: a[0] * 0 - 3),
    Case("an int32 element as an if condition means != 0", "tile-ai/tilelang#3009", INT_CONDITION,
         _make(([0, 1, -1, 0, 5, 0, 0, 2], "int32"), ([0] * 8, "int32")), lambda a: (a[0] != 0).to(a[0].dtype)),
    Case("broadcast a 48-wide vector over a 2-D T.Parallel", "tile-ai/tilelang#2394", BROADCAST_48,
         _make(((48,), "float32"), ([[0.0] * 48] * 16, "float32")), lambda a: (a[0] * 2).expand(16, 48)),
    Case("T.Persistent over a 5x5 tile grid on 4 blocks covers every tile", "tile-ai/tilelang#2433", PERSISTENT,
         _make(((40, 40), "float32"), ([[0.0] * 40] * 40, "float32")), lambda a: a[0] + 1),
    Case("whole-buffer atomic_add(Out, A[tid]) from every thread", "tile-ai/tilelang#2959", WHOLE_BUFFER_ATOMIC,
         _make(([k % 7 - 3 for k in range(128)], "int32"), ([0], "int32")), lambda a: a[0].sum().reshape(1)),
    Case("T.vectorized(start, stop) with start > 0", "tile-ai/tilelang#2669", VECTORIZED_START,
         _make(((16,), "float32"), ([0.0] * 16, "float32")), _vectorized_ref),
]
