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


@pytest.mark.parametrize("target", ["cpu", "sm_90a", "sm_80"])
def test_the_gate_refuses_a_wgmma_gemm_that_cannot_be_wgmma_on_every_target(target):
    """On sm_80 the checker's needs-sm90 names the reason (no wgmma before Hopper), once per gemm."""
    import tvm

    from tilelang_core.diagnostics import CompileError
    from tilelang_core.lowering import refuse_errors

    code = "needs-sm90" if target == "sm_80" else "wgmma-unavailable"
    with pytest.raises(CompileError, match=r"T\.wgmma_gemm\(\) requires Hopper WGMMA lowering") as err:
        refuse_errors(_kernel(32), target)
    assert [(d.code, d.span.line) for d in err.value.diagnostics] == [(code, 12)]
    assert isinstance(err.value, tvm.error.InternalError)  # what TileLang raises for it
    if target == "sm_80":  # no wgmma on Ampere: even a warp-group tile is refused
        with pytest.raises(CompileError, match="needs-sm90"):
            refuse_errors(_kernel(64), target)


def test_a_wgmma_gemm_of_a_warp_group_tile_runs_on_the_cpu_backend():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu
    from tilelang_core.lowering import refuse_errors

    kernel = _kernel(64)
    refuse_errors(kernel, "cpu")
    a, b, d = torch.randn(64, 16).half(), torch.randn(16, 64).half(), torch.zeros(64, 64)
    cpu.build(kernel)(a, b, d)
    torch.testing.assert_close(d, a.float() @ b.float(), atol=1e-2, rtol=1e-2)


def test_a_float16_accumulator_is_valid_wgmma_run_on_the_cpu_and_refused_as_ours_on_cuda():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu
    from tilelang_core.diagnostics import CompileError
    from tilelang_core.lowering import refuse_errors

    res = check_source(textwrap.dedent(SRC.format(m=64).replace("T.float32)", "T.float16)")), "<test>")
    kernel = res.kernels[0]
    refuse_errors(kernel, "cpu")  # wgmma has f16 accumulators (TileLang lowers this gemm)
    a, b, d = torch.randn(64, 16).half(), torch.randn(16, 64).half(), torch.zeros(64, 64).half()
    cpu.build(kernel)(a, b, d)
    torch.testing.assert_close(d.float(), a.float() @ b.float(), atol=5e-2, rtol=1e-2)
    with pytest.raises(CompileError) as err:
        refuse_errors(kernel, "sm_90a")
    assert [d.code for d in err.value.diagnostics] == ["lowering-unsupported"]
