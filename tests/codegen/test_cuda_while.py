"""CUDA lowering of runtime `while` loops with `break`/`continue`: the source nvcc builds for sm_90a, and the
TVMScript stage that shows the loop."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source
from while_kernels import PERSISTENT
pytestmark = [pytest.mark.tvm]

SCAN = """
import tilelang.language as T

@T.prim_func
def scan(A: T.Tensor((8, 16), T.float32), B: T.Tensor((8, 16), T.float32)):
    with T.Kernel(8, threads=32) as bx:
        j = T.alloc_var(T.int32)
        j = 0
        while j < 16:
            if A[bx, j] < 0:
                j += 1
                continue
            B[bx, j] = A[bx, j]
            if A[bx, j] > 2:
                break
            j += 1
        for k in T.serial(16):
            if k == j:
                break
            B[bx, k] = B[bx, k] + 1
"""

TILED = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((1024, 64), T.float16), B: T.Tensor((1024, 64), T.float16)):
    with T.Kernel(4, threads=128) as bx:
        t = T.alloc_var(T.int32)
        t = bx
        while t < 16:
            S = T.alloc_shared((64, 64), T.float16)
            F = T.alloc_fragment((64, 64), T.float32)
            T.copy(A[t * 64, 0], S)
            T.copy(S, F)
            for i, j in T.Parallel(64, 64):
                F[i, j] = F[i, j] * 2
            T.copy(F, B[t * 64, 0])
            t += 4
            if t > 100:
                break
"""


def _kernel(src: str):
    res = check_source(textwrap.dedent(src), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


@pytest.mark.parametrize("src", [SCAN, TILED, PERSISTENT], ids=["scan", "tiled", "persistent-gemm"])
@pytest.mark.nvcc
def test_while_kernels_compile_for_sm90a(src):
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(_kernel(src), "sm_90a")
    assert "while" in ck.tvmscript and ("break_flag" in ck.tvmscript) == ("break" in src)
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


def test_stages_show_the_loop_then_the_flags():
    from tilelang_core import lower

    res = lower(_kernel(SCAN), "sm_90a", until="lowered")
    assert "while j < 16:" in res.stages["parsed"] and "continue" in res.stages["parsed"]
    assert "while T.And((break_flag1[0] == 0), (j[0] < 16)):" in res.stages["lowered"]


PROLOGUE = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((64,), T.float32), n: T.int32):
    half = n // 2
    with T.Kernel(2, threads=32) as bx:
        for i in T.Parallel(32):
            if bx * 32 + i < half:
                A[bx * 32 + i] = A[bx * 32 + i] * 2
"""


@pytest.mark.nvcc
def test_lets_before_the_launch_are_computed_in_the_kernel():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(_kernel(PROLOGUE), "sm_90a")
    assert "(n >> 1)" in ck.source or "n / 2" in ck.source
    assert [p["name"] for p in ck.params] == ["A", "n"]
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


def test_other_statements_before_the_launch_are_reported_at_their_line():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.codegen.cuda.common import LoweringError

    src = PROLOGUE.replace("    half = n // 2\n", "    half = n // 2\n    A[0] = 1.0\n")
    with pytest.raises(LoweringError) as info:
        generate(_kernel(src), "sm_90a")
    assert info.value.code == "lowering-unsupported" and info.value.span.line == 7
    assert "before `with T.Kernel" in str(info.value)
