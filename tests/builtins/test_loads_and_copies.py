"""T.async_copy lowered as a T.copy (complete when the statement ends) and T.__ldg (a read-only-cache load): CPU
numerics and CUDA that nvcc compiles."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

pytestmark = pytest.mark.tvm

SRC = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((64, 64), T.float16), B: T.Tensor((64, 64), T.float16)):
    with T.Kernel(1, threads=128):
        S = T.alloc_shared((64, 64), T.float16)
        T.async_copy(A, S)
        T.ptx_commit_group()
        T.ptx_wait_group(0)
        T.copy(S, B)
"""


def _kernel():
    res = check_source(textwrap.dedent(SRC), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


def test_async_copy_on_the_cpu():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a, b = torch.randn(64, 64).half(), torch.zeros(64, 64).half()
    cpu.build(_kernel())(a, b)
    assert torch.equal(a, b)


@pytest.mark.nvcc
def test_async_copy_compiles_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    assert compile_cubin(generate(_kernel(), "sm_90a").source, "sm_90a")[:4] == b"\x7fELF"


LDG = """
import tilelang.language as T

@T.prim_func
def k(x: T.Tensor((128,), T.float16), y: T.Tensor((128,), T.float16)):
    with T.Kernel(128, threads=32) as pid:
        y[pid] = T.__ldg(x[pid])
"""


def test_ldg_reads_the_element():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu
    from tilelang_core.codegen.cuda import generate

    res = check_source(textwrap.dedent(LDG), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    x, y = torch.randn(128).half(), torch.zeros(128).half()
    cpu.build(res.kernels[0])(x, y)
    assert torch.equal(x, y)
    source = generate(res.kernels[0], "sm_90a").source
    assert "__ldg((&(x_ptr[" in source


@pytest.mark.nvcc
def test_ldg_compiles_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    res = check_source(textwrap.dedent(LDG), "<test>")
    assert compile_cubin(generate(res.kernels[0], "sm_90a").source, "sm_90a")[:4] == b"\x7fELF"


def test_async_copy_other_than_global_to_shared_is_refused():
    src = textwrap.dedent(SRC).replace("T.async_copy(A, S)", "T.async_copy(S, S)")
    errs = check_source(src, "<test>").errors
    assert errs and "only supports global->shared/shared.dyn copies" in errs[0].message and errs[0].span.line == 8
