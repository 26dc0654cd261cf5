"""T.annotate_restrict_buffers(x, y): tensor parameters that may alias lose `__restrict__` in the CUDA signature (the
others keep it) and the CPU backend drops its no-alias assumption, so overlapping views compute in program order."""
from __future__ import annotations

import re
import textwrap

import pytest

from tilelang_core import check_source

pytestmark = pytest.mark.tvm

SHIFT = """
import tilelang.language as T

@T.prim_func
def shift(x: T.Tensor((64,), T.float32), y: T.Tensor((64,), T.float32), z: T.Tensor((64,), T.float32)):
    with T.Kernel(1, threads=1):
        T.annotate_restrict_buffers(x, y)
        for i in T.serial(63):
            y[i + 1] = x[i] + 1.0
        z[0] = 1.0
"""


def _kernel(src: str = SHIFT):
    res = check_source(textwrap.dedent(src), "<restrict>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


def test_the_annotation_names_the_parameters():
    assert _kernel().non_restrict == ("x", "y")


def test_a_non_buffer_argument_is_refused_at_the_line():
    res = check_source(textwrap.dedent(SHIFT.replace("(x, y)", "(x, 3)")), "<restrict>")
    assert [d.code for d in res.errors] == ["bad-arguments"] and res.errors[0].span.line == 7


def test_only_the_annotated_parameters_lose_restrict_on_cuda():
    from tilelang_core.codegen.cuda.generate import generate

    source = generate(_kernel(), "sm_90a").source
    sig = re.search(r'extern "C" __global__ void[^{;]*\{', source).group(0)
    assert "__restrict__ x_ptr" not in sig and "__restrict__ y_ptr" not in sig, sig
    assert "__restrict__ z_ptr" in sig, sig
    plain = generate(_kernel(SHIFT.replace("        T.annotate_restrict_buffers(x, y)\n", "")), "sm_90a").source
    assert "__restrict__ x_ptr" in plain


@pytest.mark.nvcc
def test_the_annotated_kernel_compiles_for_sm90a():
    from tilelang_core.codegen.cuda.generate import generate
    from tilelang_core.runtime.artifact import compile_cubin

    assert compile_cubin(generate(_kernel(), "sm_90a").source, "sm_90a")[:4] == b"\x7fELF"


def test_overlapping_views_run_in_program_order_on_the_cpu():
    """x and y are one tensor: each step reads what the previous step wrote (y[k] = y[0] + k)."""
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    module = cpu.build(_kernel())
    assert "noalias" not in module.llvm_ir.split("define", 1)[1].split("\n", 1)[0]
    t, z = torch.zeros(64), torch.zeros(64)
    module(t, t, z)
    torch.testing.assert_close(t, torch.arange(64, dtype=torch.float32))
