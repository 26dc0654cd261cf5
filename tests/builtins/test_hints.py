"""T.annotate_safe_value (what reads outside a tensor give: elementwise loads and T.copy, CPU and CUDA), T.assume
(a host-evaluable one checked at each call) and T.Select."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

pytestmark = pytest.mark.tvm

SAFE = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((70, 75), T.float32), B: T.Tensor((96, 96), T.float16), C: T.Tensor((96, 96), T.float32)):
    with T.Kernel(3, 3, threads=128) as (bx, by):
        T.annotate_safe_value({A: -99})
        T.copy(A[by * 32:(by + 1) * 32, bx * 32:(bx + 1) * 32], B[by * 32:(by + 1) * 32, bx * 32:(bx + 1) * 32])
        S = T.alloc_shared((32, 32), T.float32)
        for i, j in T.Parallel(32, 32):
            S[i, j] = A[by * 32 + i - 10, bx * 32 + j]
        T.copy(S, C[by * 32, bx * 32])
"""

ASSUME = """
import tilelang.language as T

N = T.dynamic("N")

@T.prim_func
def k(A: T.Tensor((N,), T.float32)):
    with T.Kernel(1, threads=32):
        T.assume(N % 4 == 0)
        tx = T.get_thread_binding()
        if tx < N:
            A[tx] = T.Select(tx % 2 == 0, 1.0, 2.0)
"""


def _kernel(src: str):
    res = check_source(textwrap.dedent(src), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


def _safe_reference(torch, a):
    b = torch.full((96, 96), -99.0)
    b[:70, :75] = a
    c = torch.full((96, 96), -99.0)
    for by in range(3):
        for i in range(32):
            row = by * 32 + i - 10
            if 0 <= row < 70:
                c[by * 32 + i, :75] = a[row]
    return b.half(), c


def test_reads_outside_a_tensor_give_its_safe_value_on_the_cpu():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a = torch.randn(70, 75)
    b, c = torch.zeros(96, 96, dtype=torch.float16), torch.zeros(96, 96)
    cpu.build(_kernel(SAFE))(a, b, c)
    want_b, want_c = _safe_reference(torch, a)
    torch.testing.assert_close(b, want_b)
    torch.testing.assert_close(c, want_c)


@pytest.mark.nvcc
def test_the_safe_value_reaches_the_cuda_source():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(_kernel(SAFE), "sm_90a")
    assert "T.float32(-99.0)" in ck.tvmscript and "T.float16(-99.0)" in ck.tvmscript
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


def test_a_host_evaluable_assumption_is_checked_at_each_call():
    torch = pytest.importorskip("torch")
    import tilelang_core as tl

    src = textwrap.dedent(ASSUME)
    kernel = tl.compile(_kernel(src), target="cpu")
    a = torch.zeros(4)
    kernel(a)
    assert a.tolist() == [1.0, 2.0, 1.0, 2.0]
    with pytest.raises(RuntimeError, match="Assume: N % 4 == 0"):
        kernel(torch.zeros(2))


def test_select_on_the_cpu():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a = torch.zeros(8)
    cpu.build(_kernel(ASSUME.replace("N = T.dynamic(\"N\")", "N = 8")))(a)
    assert a.tolist() == [1.0, 2.0] * 4


def test_math_builtins_take_keyword_arguments():
    """`T.clamp(x, min_val=..., max_val=...)`: keywords land where the catalog puts their names."""
    src = textwrap.dedent("""
    import tilelang.language as T

    @T.prim_func
    def k(A: T.Tensor((8,), T.float32)):
        with T.Kernel(1, threads=8):
            for i in T.Parallel(8):
                A[i] = T.clamp(A[i], min_val=-0.5, max_val=0.5)
    """)
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a = torch.linspace(-1, 1, 8)
    cpu.build(_kernel(src))(a)
    torch.testing.assert_close(a, torch.linspace(-1, 1, 8).clamp(-0.5, 0.5))
    errs = check_source(src.replace("min_val=-0.5", "lo=-0.5"), "<test>").errors
    assert errs and "has no parameter `lo`" in errs[0].message


@pytest.mark.nvcc
def test_an_assumption_before_the_kernel_lowers_for_cuda_as_on_the_cpu():
    """T.assume ahead of `with T.Kernel(...)` (TileLang's z3-context test writes it there) runs nothing on either
    backend; the CUDA lowering refused it as a statement before the kernel while the CPU backend ran the program."""
    from tilelang_core.codegen.cuda import generate

    src = textwrap.dedent(ASSUME).replace("    with T.Kernel(1, threads=32):\n        T.assume(N % 4 == 0)\n",
                                          "    T.assume(N % 4 == 0)\n    with T.Kernel(1, threads=32):\n")
    assert src.index("T.assume") < src.index("T.Kernel")
    kernel = _kernel(src)
    assert "A_ptr[" in generate(kernel, "sm_90a").source
