"""Reductions, casts and half-precision math the real TileLang got wrong: batched row reductions over few threads,
absmax/abssum of unsigned ints, clear=False merges, int -> bfloat16 rounding, a float16 literal past 65504,
unsigned widening, float % and //, copysign/atan2/pow on float16/bfloat16."""
from __future__ import annotations

from fuzz_harness import Case

BATCH_REDUCE = """
@T.prim_func
def k(A: T.Tensor((4, 8), "float32"), S: T.Tensor((4,), "float32"), M: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=128) as _:
        a = T.alloc_fragment((4, 8), "float32")
        s = T.alloc_fragment((4,), "float32")
        m = T.alloc_fragment((4,), "float32")
        T.copy(A, a)
        T.reduce_sum(a, s, dim=1)
        T.reduce_max(a, m, dim=1)
        T.copy(s, S)
        T.copy(m, M)
"""

ABS_UNSIGNED = """
@T.prim_func
def k(A: T.Tensor((64,), "uint32"), S: T.Tensor((2,), "uint32")):
    with T.Kernel(1, threads=64) as _:
        a = T.alloc_fragment((64,), "uint32")
        s = T.alloc_fragment((1,), "uint32")
        t = T.alloc_fragment((1,), "uint32")
        T.copy(A, a)
        T.reduce_absmax(a, s, dim=0)
        T.reduce_abssum(a, t, dim=0)
        S[0] = s[0]
        S[1] = t[0]
"""

NO_CLEAR = """
@T.prim_func
def k(A: T.Tensor((4, 32), "float32"), S: T.Tensor((4,), "float32")):
    with T.Kernel(1, threads=128) as _:
        a = T.alloc_fragment((4, 32), "float32")
        s = T.alloc_fragment((4,), "float32")
        T.copy(A, a)
        T.fill(s, -1.0)
        T.reduce_max(a, s, dim=1, clear=False)
        T.copy(s, S)
"""

ELEMENTWISE = """
@T.prim_func
def k(A: T.Tensor(({n},), "{src}"), B: T.Tensor(({n},), "{dst}")):
    with T.Kernel(1, threads=32) as _:
        for i in T.Parallel({n}):
            B[i] = {expr}
"""

BINARY_HALF = """
@T.prim_func
def k(A: T.Tensor((8,), "{dt}"), B: T.Tensor((8,), "{dt}"), C: T.Tensor((8,), "{dt}")):
    with T.Kernel(1, threads=32) as _:
        for i in T.Parallel(8):
            C[i] = T.copysign(A[i], B[i]) + T.atan2(A[i], B[i]) + T.pow(T.abs(A[i]), B[i])
"""


def _tensors(*specs):
    """Inputs from (values or shape, dtype) pairs; the last one is the zeroed output."""
    def make(device):
        import torch

        g = torch.Generator().manual_seed(9)
        out = []
        for values, dt in specs:
            dtype = getattr(torch, dt)
            if isinstance(values, tuple):
                t = torch.randn(values, generator=g) * 10
            else:
                t = torch.tensor(values, dtype=torch.float64)
            out.append(t.to(dtype).to(device))
        out[-1] = out[-1].zero_()
        return out
    return make


def _no_clear_ref(args):
    import torch

    return torch.maximum(args[0].amax(1), torch.tensor(-1.0))


def _unsigned_ref(args):
    import torch

    a = args[0].to(torch.int64)
    return torch.tensor([a.max().item(), a.sum().item() % 2 ** 32], dtype=torch.int64).to(torch.uint32)


def _elementwise(src, dst, n, expr):
    return ELEMENTWISE.format(src=src, dst=dst, n=n, expr=expr)


U32 = [0, 1, 7, 2 ** 31, 2 ** 32 - 1, 12345, 99, 3] * 8
INTS = [259, 33000, -259, 257, 16777217, -33000, 511, 1]
HALF_IN = [0.5, -2.0, 3.0, -0.25, 1.5, -7.0, 2.0, 0.125]
HALF_SIGN = [-1.0, 2.0, -0.5, 3.0, -2.0, 0.5, -3.0, 1.0]

CASES = [
    Case("reduce_sum/max over 4 rows of 8 on 128 threads (batched all-reduce)", "tile-ai/tilelang#2524",
         BATCH_REDUCE, _tensors(((4, 8), "float32"), ((4,), "float32"), ((4,), "float32")),
         lambda a: [a[0].sum(1), a[0].amax(1)], outputs=(1, 2), rtol=1e-5, atol=1e-5),
    Case("reduce_absmax/abssum of uint32 (abs of an unsigned is itself)", "tile-ai/tilelang#2624", ABS_UNSIGNED,
         _tensors((U32, "uint32"), ([0, 0], "uint32")), _unsigned_ref),
    Case("reduce_max with clear=False merges into the fragment's value", "tile-ai/tilelang#2697", NO_CLEAR,
         _tensors(((4, 32), "float32"), ((4,), "float32")), _no_clear_ref),
    Case("int32 -> bfloat16 rounds to nearest even", "tile-ai/tilelang#2483",
         _elementwise("int32", "bfloat16", 8, 'T.cast(A[i], "bfloat16")'),
         _tensors((INTS, "int32"), ([0] * 8, "bfloat16")), lambda a: a[0].to(a[1].dtype)),
    Case("float16 literal past 65504 rounds (65510 -> 65504, 65520 -> inf)", "tile-ai/tilelang#2999",
         _elementwise("float16", "float16", 4,
                      'A[i] + T.cast(T.float32(65510.0), "float16") - T.cast(T.float32(65520.0), "float16")'),
         _tensors(([0.0] * 4, "float16"), ([0.0] * 4, "float16")),
         lambda a: a[0] + 65504.0 - float("inf")),
    Case("uint8 -> int32 and float32 zero-extend", "tile-ai/tilelang#2974",
         _elementwise("uint8", "float32", 8, 'T.cast(T.cast(A[i], "int32"), "float32") + T.cast(A[i], "float32")'),
         _tensors(([0, 1, 127, 128, 200, 255, 3, 64], "uint8"), ([0] * 8, "float32")),
         lambda a: a[0].float() * 2),
    Case("float % and // follow Python (floor) semantics", "tile-ai/tilelang#3008",
         _elementwise("float32", "float32", 8, "A[i] % 3.0 + (A[i] // 2.0) * 100.0"),
         _tensors(([7.5, -7.5, 3.0, -0.5, 10.25, -10.25, 0.0, 5.0], "float32"), ([0] * 8, "float32")),
         lambda a: a[0] % 3.0 + (a[0] // 2.0) * 100.0, rtol=1e-6),
] + [
    Case(f"copysign/atan2/pow on {dt}", "tile-ai/tilelang#2990, #2571", BINARY_HALF.format(dt=dt),
         _tensors((HALF_IN, dt), (HALF_SIGN, dt), ([0] * 8, dt)),
         lambda a: (torch_copysign(a[0], a[1]) + torch_atan2(a[0], a[1]) + a[0].float().abs() ** a[1].float())
         .to(a[0].dtype), rtol=2e-2, atol=2e-2)
    for dt in ("float16", "bfloat16")
]


def torch_copysign(a, b):
    import torch

    return torch.copysign(a.float(), b.float())


def torch_atan2(a, b):
    import torch

    return torch.atan2(a.float(), b.float())
