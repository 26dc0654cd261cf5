"""TileLang's tfloat32 (stored as float32, passed as torch.float32 tensors): a tensor parameter, a fragment and a
gemm operand of that dtype lower for sm_90a (nvcc) and match torch on the CPU backend (deepseek_mhc/example_mhc_pre)."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source, lower

pytestmark = [pytest.mark.tvm]

KERNEL = """
import tilelang.language as T

@T.prim_func
def k(X: T.Tensor((32, 64), "float32"), W: T.Tensor((32, 64), T.tfloat32), O: T.Tensor((32, 32), "float32")):
    with T.Kernel(1, threads=128) as _:
        w_s = T.alloc_shared((32, 64), T.tfloat32)
        x = T.alloc_fragment((32, 64), T.tfloat32)
        o = T.alloc_fragment((32, 32), "float32")
        T.copy(W, w_s)
        T.copy(X, x)
        T.gemm(x, w_s, o, transpose_B=True, clear_accum=True)
        T.copy(o, O)
"""


def _kernel():
    res = check_source(textwrap.dedent(KERNEL), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


@pytest.mark.nvcc
def test_tfloat32_lowers_as_float32_and_compiles_for_sm90a():
    from tilelang_core.runtime.artifact import compile_cubin

    res = lower(_kernel(), "sm_90a")
    assert "tfloat32" not in res.source
    assert compile_cubin(res.source, "sm_90a")[:4] == b"\x7fELF"


def test_tfloat32_matches_torch_on_the_cpu_backend():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    x, w, o = torch.randn(32, 64), torch.randn(32, 64), torch.zeros(32, 32)
    cpu.build(_kernel())(x, w, o)
    torch.testing.assert_close(o, x @ w.T, rtol=1e-4, atol=1e-4)
