"""T.isfinite on the CUDA backend is CUDA's `isfinite` (one exponent test; 16-bit floats widened to float), not
TVM's expansion |x| != inf && x == x; the CPU backend gives the same answers."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

SRC = """
import tilelang.language as T

@T.prim_func
def k(X: T.Tensor((6,), T.float32), H: T.Tensor((6,), T.float16), Y: T.Tensor((6,), T.int32),
      Z: T.Tensor((6,), T.int32)):
    with T.Kernel(1, threads=32):
        for i in T.Parallel(6):
            Y[i] = T.if_then_else(T.isfinite(X[i]), 1, 0)
            Z[i] = T.if_then_else(T.isfinite(H[i]), 1, 0)
"""


def _kernel():
    res = check_source(textwrap.dedent(SRC), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


def test_isfinite_is_cudas_intrinsic_and_agrees_with_the_cpu():
    from tilelang_core.codegen import cpu
    from tilelang_core.codegen.cuda import generate

    x = torch.tensor([1.0, float("inf"), -float("inf"), float("nan"), -0.0, 3e38])
    y, z = torch.zeros(6, dtype=torch.int32), torch.zeros(6, dtype=torch.int32)
    cpu.build(_kernel())(x, x.half(), y, z)
    assert y.tolist() == [1, 0, 0, 0, 1, 1] and z.tolist() == [1, 0, 0, 0, 1, 0]  # 3e38 overflows half
    src = generate(_kernel(), "sm_90a").source
    assert src.count("isfinite(") == 2 and "CUDART_INF_F" not in src


@pytest.mark.nvcc
def test_isfinite_compiles_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    assert compile_cubin(generate(_kernel(), "sm_90a").source, "sm_90a")[:4] == b"\x7fELF"
