"""T.wgmma_gemm asks for Hopper wgmma: a gemm that cannot be one (M = 32 for a warp group) is refused at its line on
the CUDA backend instead of running as mma.sync; one that can is lowered to wgmma."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

pytestmark = pytest.mark.tvm

SRC = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor(({m}, 16), T.float16), B: T.Tensor((16, 64), T.float16), D: T.Tensor(({m}, 64), T.float32)):
    with T.Kernel(1, threads=128):
        A_shared = T.alloc_shared(({m}, 16), T.float16)
        B_shared = T.alloc_shared((16, 64), T.float16)
        C_local = T.alloc_fragment(({m}, 64), T.float32)
        T.copy(A, A_shared)
        T.copy(B, B_shared)
        T.wgmma_gemm(A_shared, B_shared, C_local, clear_accum=True)
        T.copy(C_local, D)
"""


def _kernel(m: int):
    res = check_source(textwrap.dedent(SRC.format(m=m)), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


def test_a_wgmma_gemm_that_cannot_be_wgmma_is_refused_at_its_line():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.codegen.cuda.common import LoweringError

    with pytest.raises(LoweringError, match=r"T\.wgmma_gemm\(\) requires Hopper WGMMA lowering") as err:
        generate(_kernel(32), "sm_90a")
    assert err.value.span.line == 12


def test_a_wgmma_gemm_of_a_warp_group_tile_is_wgmma():
    from tilelang_core.codegen.cuda import generate

    assert "wgmma" in generate(_kernel(64), "sm_90a").source
