"""sm_75 (Turing) as a CUDA target: kernels without sm_80's abilities compile (bfloat16 through cuda_bf16.h, which
TVM includes for sm_80+ only); a T.gemm, a multi-stage T.Pipelined loop or a cp.async intrinsic is refused at its
line for sm_75."""
from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tilelang_core import check_source

pytestmark = pytest.mark.tvm

FMA = """
import tilelang.language as T

@T.prim_func
def fma(A: T.Tensor((32, 32), T.bfloat16), B: T.Tensor((32, 32), T.bfloat16), D: T.Tensor((32, 32), T.bfloat16)):
    with T.Kernel(2, 2, threads=128) as (bx, by):
        for i, j in T.Parallel(16, 16):
            D[by * 16 + i, bx * 16 + j] = T.ieee_fmaf(A[by * 16 + i, bx * 16 + j], B[by * 16 + i, bx * 16 + j],
                                                      D[by * 16 + i, bx * 16 + j], "rn")
"""

PIPELINED_COPY = """
import tilelang.language as T

@T.prim_func
def copy(A: T.Tensor((256, 64), T.float16), B: T.Tensor((256, 64), T.float16)):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((32, 64), T.float16)
        for k in T.Pipelined(8, num_stages={stages}):
            T.copy(A[k * 32, 0], S)
            T.copy(S, B[k * 32, 0])
"""


def _kernel(src: str):
    res = check_source(textwrap.dedent(src), "<sm75>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


def test_bfloat16_kernels_include_cuda_bf16_for_sm75_only():
    from tilelang_core.codegen.cuda.generate import generate

    assert generate(_kernel(FMA), "sm_75").source.startswith("#include <cuda_bf16.h>\n")
    assert not generate(_kernel(FMA), "sm_80").source.startswith("#include <cuda_bf16.h>\n")


@pytest.mark.nvcc
def test_a_bfloat16_fma_kernel_compiles_for_sm75():
    from tilelang_core.runtime.artifact import build_artifact

    art = build_artifact(_kernel(FMA), "sm_75", cache=False)
    assert art.cubin[:4] == b"\x7fELF" and art.arch == "sm_75"


@pytest.mark.parametrize("src, line, words", [
    ((Path(__file__).parents[2] / "examples" / "gemm.py").read_text(), None, "T.gemm on sm_75"),
    (PIPELINED_COPY.format(stages=2), 8, "num_stages >= 2 on sm_75"),
])
def test_what_needs_sm80_is_refused_at_its_line(src, line, words):
    from tilelang_core.diagnostics import CompileError
    from tilelang_core.lowering import lower

    with pytest.raises(CompileError) as info:
        lower(_kernel(src), "sm_75")
    (diag,) = info.value.diagnostics
    assert diag.code == "lowering-unsupported" and words in diag.message and "sm_80" in diag.message
    text = textwrap.dedent(src).splitlines()[diag.span.line - 1]
    assert (line is None and "T.gemm" in text) or diag.span.line == line


def test_a_single_stage_pipelined_copy_lowers_for_sm75():
    from tilelang_core.lowering import lower

    assert "cp_async" not in lower(_kernel(PIPELINED_COPY.format(stages=1)), "sm_75").source.split("__global__")[-1]
