"""fp8 shared, fragment and local buffers on the CPU backend are stored as their uint8 bits: every one of the 256
codes survives a trip through scratch (TVM's own fp8 storage decoded zero and subnormals as normals)."""
from __future__ import annotations

import pytest
from test_cpu_backend import build_src

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

ROUND_TRIP = """
import tilelang
import tilelang.language as T


@T.prim_func
def round_trip(A: T.Tensor((256,), "{dt}"), B: T.Tensor((256,), "{dt}"), C: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=128) as _:
        s = T.alloc_shared((256,), "{dt}")
        f = T.alloc_fragment((256,), "{dt}")
        T.copy(A, s)
        T.copy(s, f)
        for i in T.Parallel(256):
            C[i] = T.cast(f[i], "float32")
        T.copy(f, B)
"""

NEGATED_INFINITY = """
import tilelang
import tilelang.language as T


@T.prim_func
def neg_inf(B: T.Tensor((32,), "float8_e5m2")):
    with T.Kernel(1, threads=32) as _:
        f = T.alloc_fragment((32,), "float8_e5m2")
        T.fill(f, -T.infinity("float8_e5m2"))
        T.copy(f, B)
"""


@pytest.mark.parametrize("dt", ["float8_e4m3fn", "float8_e5m2"])
def test_every_fp8_code_survives_scratch(dt):
    codes = torch.arange(256, dtype=torch.uint8)
    a = codes.view(getattr(torch, dt))
    b = torch.zeros(256, dtype=torch.uint8).view(getattr(torch, dt))
    c = torch.zeros(256)
    build_src(ROUND_TRIP.format(dt=dt))(a, b, c)
    nan = a.float().isnan()
    assert torch.equal(b.view(torch.uint8)[~nan], codes[~nan])  # zero and subnormals included
    assert b.float()[nan].isnan().all()
    assert torch.equal(c[~nan], a.float()[~nan]) and c[nan].isnan().all()


def test_fp8_arithmetic_on_constants_keeps_infinity():
    b = torch.zeros(32, dtype=torch.uint8).view(torch.float8_e5m2)
    build_src(NEGATED_INFINITY)(b)
    assert b.float().eq(float("-inf")).all()
