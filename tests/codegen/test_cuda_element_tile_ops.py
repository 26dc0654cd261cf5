"""Tile ops on single elements and per-thread buffers on the CUDA backend: `T.copy(a[i], b[j])` (one element, its
dtype converted) and T.reduce_* of a T.alloc_local buffer (each thread folds its own), run on the CPU backend
against torch and lowered for sm_90a that nvcc compiles."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

SRC = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((8,), T.float16), I: T.Tensor((4,), T.int64), B: T.Tensor((3,), T.float16),
      O: T.Tensor((4,), T.int32)):
    with T.Kernel(4, threads=32) as pid:
        src = T.alloc_local((8,), T.float16)
        dst = T.alloc_local((3,), T.float16)
        idx = T.alloc_local([1], T.int32)
        sh = T.alloc_shared([2], T.int32)
        for i in T.serial(8):
            src[i] = A[i]
        T.reduce_max(src, dst[0:1], dim=0)
        T.reduce_min(src, dst[1:2], dim=0)
        T.reduce_sum(src, dst[2:3], dim=0)
        T.copy(I[pid], idx[0])
        T.copy(I[pid], sh[1])
        O[pid] = idx[0] + sh[1]
        if pid == 0:
            for j in T.serial(3):
                B[j] = dst[j]
"""


def _kernel():
    res = check_source(textwrap.dedent(SRC), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


def test_element_copies_and_per_thread_reductions_on_the_cpu_and_for_sm90a():
    from tilelang_core.codegen import cpu
    from tilelang_core.codegen.cuda import generate

    a = torch.tensor([0.5, -2.0, 3.25, 1.0, -0.75, 2.0, 0.25, -1.0], dtype=torch.float16)
    i = torch.tensor([7, 1 << 20, -3, 42], dtype=torch.int64)
    b, o = torch.zeros(3, dtype=torch.float16), torch.zeros(4, dtype=torch.int32)
    func = _kernel()
    cpu.build(func)(a, i, b, o)
    assert b.tolist() == [a.max().item(), a.min().item(), a.float().sum().item()]
    assert o.tolist() == (2 * i).to(torch.int32).tolist()
    src = generate(func, "sm_90a").source
    assert "(int)I_ptr[" in src  # the int64 element converted on its way into the int32 buffers


@pytest.mark.nvcc
def test_element_copies_and_per_thread_reductions_compile_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    assert compile_cubin(generate(_kernel(), "sm_90a").source, "sm_90a")[:4] == b"\x7fELF"
