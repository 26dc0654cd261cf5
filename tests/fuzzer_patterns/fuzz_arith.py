"""Integer and float arithmetic the real TileLang got wrong: ceildiv/floordiv signs, sub-word shifts, NaN in
clamp/max/min, x*0 and x-x folding, pow with an integer exponent, float ceil of a narrow literal."""
from __future__ import annotations

from fuzz_harness import Case

N = 64


def _ints(lo, hi, dtype="int32"):
    def make(device):
        import torch

        g = torch.Generator().manual_seed(7)
        a = torch.randint(lo, hi, (N,), generator=g, dtype=getattr(torch, dtype))
        b = torch.randint(lo, hi, (N,), generator=g, dtype=getattr(torch, dtype))
        b[b == 0] = 3
        return [a.to(device), b.to(device), torch.zeros(N, dtype=getattr(torch, dtype), device=device)]
    return make


def _floats(values, dtype="float32"):
    def make(device):
        import torch

        a = torch.tensor(values, dtype=getattr(torch, dtype))
        return [a.to(device), torch.zeros(len(values), dtype=getattr(torch, dtype), device=device)]
    return make


def binary_int(expr):
    """C[i] = expr over a = A[i], b = B[i] (int32)."""
    return f"""
@T.prim_func
def k(A: T.Tensor(({N},), "int32"), B: T.Tensor(({N},), "int32"), C: T.Tensor(({N},), "int32")):
    with T.Kernel(1, threads=32) as _:
        for i in T.Parallel({N}):
            C[i] = {expr.format(a="A[i]", b="B[i]")}
"""


def unary_float(expr, n, dtype="float32"):
    """B[i] = expr over x = A[i]."""
    return f"""
@T.prim_func
def k(A: T.Tensor(({n},), "{dtype}"), B: T.Tensor(({n},), "{dtype}")):
    with T.Kernel(1, threads=32) as _:
        for i in T.Parallel({n}):
            B[i] = {expr.format(x="A[i]")}
"""


def shift_roundtrip(dtype):
    """(x << 4) >> 4 computed in the narrow type (a nibble sign-extend / mask idiom)."""
    return f"""
@T.prim_func
def k(A: T.Tensor(({N},), "{dtype}"), B: T.Tensor(({N},), "{dtype}")):
    with T.Kernel(1, threads=32) as _:
        for i in T.Parallel({N}):
            B[i] = (A[i] << T.cast(4, "{dtype}")) >> T.cast(4, "{dtype}")
"""


def _shift_ref(dtype):
    def ref(args):
        import torch

        a = args[0]
        wide = (a.to(torch.int64) << 4)
        bits = {"int8": 8, "uint8": 8, "int16": 16, "uint16": 16}[dtype]
        wrapped = wide & ((1 << bits) - 1)
        if dtype.startswith("int"):
            wrapped = torch.where(wrapped >= 1 << (bits - 1), wrapped - (1 << bits), wrapped)
        return (wrapped >> 4).to(a.dtype)
    return ref


def _shift_inputs(dtype):
    def make(device):
        import torch

        lo, hi = (-128, 128) if dtype == "int8" else (0, 256) if dtype == "uint8" else \
            (-32768, 32768) if dtype == "int16" else (0, 65536)
        a = torch.arange(lo, hi, max(1, (hi - lo) // N))[:N].to(getattr(torch, dtype))
        return [a.to(device), torch.zeros(N, dtype=a.dtype, device=device)]
    return make


def _ceildiv(a, b):
    import torch

    return -torch.div(-a, b, rounding_mode="floor")


SPECIAL = [float("nan"), 1.0, -1.0, float("inf"), -float("inf"), 0.5, 3.0, -3.0]

CASES = [
    Case("ceildiv with a negative divisor", "tile-ai/tilelang#2943", binary_int("T.ceildiv({a}, {b})"),
         _ints(-50, 50), lambda a: _ceildiv(a[0], a[1])),
    Case("floordiv/floormod with negative operands", "tile-ai/tilelang#2973",
         binary_int("T.floordiv({a}, {b}) * 1000 + T.floormod({a}, {b})"), _ints(-50, 50),
         lambda a: torch_floordiv(a[0], a[1]) * 1000 + torch_floormod(a[0], a[1])),
    Case("truncdiv/truncmod with negative operands", "tile-ai/tilelang#2973",
         binary_int("T.truncdiv({a}, {b}) * 1000 + T.truncmod({a}, {b})"), _ints(-50, 50),
         lambda a: torch_truncdiv(a[0], a[1]) * 1000 + (a[0] - torch_truncdiv(a[0], a[1]) * a[1])),
    Case("python // and % on ints floor", "tile-ai/tilelang#2973",
         binary_int("({a} // {b}) * 1000 + {a} % {b}"), _ints(-50, 50),
         lambda a: torch_floordiv(a[0], a[1]) * 1000 + torch_floormod(a[0], a[1])),
    Case("clamp propagates NaN", "tile-ai/tilelang#3024", unary_float("T.clamp({x}, -2.0, 2.0)", 8),
         _floats(SPECIAL), lambda a: a[0].clamp(-2.0, 2.0)),
    Case("max/min treat NaN the same in either order", "tile-ai/tilelang#2882",
         unary_float("T.max({x}, 0.0) + T.min(0.0, {x})", 8), _floats(SPECIAL),
         lambda a: fmax0(a[0]) + fmin0(a[0])),
    Case("x * 0 and x - x keep NaN/inf semantics", "tile-ai/tilelang#2638",
         unary_float("{x} * 0.0 + ({x} - {x})", 8), _floats(SPECIAL), lambda a: a[0] * 0.0 + (a[0] - a[0])),
    Case("pow with an integer exponent <= 0", "tile-ai/tilelang#2614",
         unary_float("T.pow({x}, 0) + T.pow({x}, -1) + T.pow({x}, 2)", 4), _floats([0.5, 2.0, -4.0, 3.0]),
         lambda a: a[0] ** 0 + a[0] ** -1 + a[0] ** 2, rtol=1e-6),
    Case("ceil/floor of a narrow literal use the rounded value", "tile-ai/tilelang#2945",
         unary_float("{x} + T.ceil(T.float32(8388608.5)) + T.floor(T.float32(-8388608.5))", 1),
         _floats([0.0]), lambda a: a[0] + 8388608.0 - 8388608.0),
] + [
    Case(f"(x << 4) >> 4 on {dt}", "tile-ai/tilelang#2961", shift_roundtrip(dt), _shift_inputs(dt), _shift_ref(dt))
    for dt in ("int8", "uint8", "int16", "uint16")
]


def fmax0(x):
    """max(x, 0) with IEEE maxNum semantics (what CUDA fmaxf computes): NaN gives the other operand."""
    import torch

    return torch.fmax(x, torch.zeros_like(x))


def fmin0(x):
    import torch

    return torch.fmin(x, torch.zeros_like(x))


def torch_floordiv(a, b):
    import torch

    return torch.div(a, b, rounding_mode="floor")


def torch_floormod(a, b):
    return a - torch_floordiv(a, b) * b


def torch_truncdiv(a, b):
    import torch

    return torch.div(a, b, rounding_mode="trunc")
