"""A tensor with an int64 dimension (T.symbolic("n", "int64")) is indexed in 64 bits on the CUDA backend: the dim is
an int64_t parameter and `bx * 512 + i` is computed in int64 from its leaves (in int32 it wrapped past 2**31 elements:
an illegal memory access on the H200 for the peer int64 fill of 2**32 elements). Tile ops on such a tensor are refused
at their line rather than indexed in 32 bits."""
from __future__ import annotations

import pytest

from tilelang_core import check_source
from tilelang_core.diagnostics import CompileError

pytestmark = [pytest.mark.tvm, pytest.mark.nvcc]

FILL = """
import tilelang.language as T

n = T.symbolic("n", "int64")

@T.prim_func
def fill(x: T.Tensor[n, T.bfloat16], y: T.Tensor[(1024,), T.int32]):
    with T.Kernel(T.ceildiv(n, 512), threads=128) as bx:
        for i in T.Parallel(512):
            x[bx * 512 + i] = T.Cast(T.bfloat16, y[i])
"""

TILE = """
import tilelang.language as T

n = T.symbolic("n", "int64")

@T.prim_func
def tile(x: T.Tensor[n, T.float32]):
    with T.Kernel(T.ceildiv(n, 512), threads=128) as bx:
        s = T.alloc_shared((512,), T.float32)
        T.copy(x[bx * 512], s)
"""


def test_an_int64_dim_is_a_64_bit_parameter_and_the_index_is_computed_in_64_bits():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    res = check_source(FILL, "fill.py")
    assert not res.errors, [d.message for d in res.errors]
    kernel = generate(res.kernels[0], "sm_90a")
    body = kernel.source.split('extern "C" __global__')[-1]
    assert "int64_t n)" in body
    store = next(line for line in body.split("\n") if "x_ptr[" in line and "=" in line)
    assert "((int64_t)((int)blockIdx.x)) * (int64_t)512" in store  # widened before the multiply, not after
    assert "y_ptr[" in store and "y_ptr[(int64_t)" not in store  # the int32 tensor keeps 32-bit indices
    assert compile_cubin(kernel.source, "sm_90a")[:4] == b"\x7fELF"


def test_a_tile_op_on_an_int64_tensor_is_refused_at_its_line():
    from tilelang_core.lowering import lower

    res = check_source(TILE, "tile.py")
    with pytest.raises(CompileError, match=r"tile.py:10:\d+: error\[lowering-unsupported\] copy on 'x', a tensor "
                                           r"with an int64 dimension"):
        lower(res.kernels[0], target="sm_90a")
