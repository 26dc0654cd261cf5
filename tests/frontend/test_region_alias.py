"""A slice bound to a name (`X = A_shared[:64, :32]`) as a later tile-op operand, a variable declared with
`T.int32()` and bound by `T.let(v, value)`, and what TileLang rejects about both (reported at the user's line)."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

GEMM = """
import tilelang_core.language as T

@T.prim_func
def main(A: T.Tensor((64, 64), T.float16), B: T.Tensor((64, 64), T.float16), C: T.Tensor((64, 64), T.float32)):
    with T.Kernel(2, 2, threads=128) as (bx, by):
        A_shared = T.alloc_shared((32, 64), T.float16)
        B_shared = T.alloc_shared((32, 16), T.float16)
        C_local = T.alloc_fragment((32, 32), T.float32)
        X_shared = A_shared[:32, :16]
        X_local = C_local[:, 16:32]
        T.fill(C_local, 1.0)
        T.clear(X_local)
        for ko in T.Pipelined(4, num_stages=0):
            offset = T.int32()
            T.let(offset, ko * 16)
            T.copy(A[by * 32, offset], X_shared)
            T.copy(B[bx * 32, ko * 16], B_shared)
            T.gemm(X_shared, B_shared, C_local, transpose_B=True)
        T.copy(C_local, C[by * 32, bx * 32])
"""


def _kernel(src: str):
    res = check_source(textwrap.dedent(src), "<alias>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


def _errors(src: str) -> list:
    return check_source(textwrap.dedent(src), "<alias>").errors


@pytest.mark.tvm
def test_region_aliases_and_a_let_variable_run_on_the_cpu():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a, b = torch.randn(64, 64, dtype=torch.float16), torch.randn(64, 64, dtype=torch.float16)
    c = torch.zeros(64, 64)
    cpu.build(_kernel(GEMM))(a, b, c)
    ref = a.float() @ b.float().T
    ref[:, 0:16] += 1.0  # the fill survives where X_local (columns 16:32 of each tile) was not cleared
    ref[:, 32:48] += 1.0
    torch.testing.assert_close(c, ref, atol=1e-2, rtol=1e-2)


@pytest.mark.tvm
@pytest.mark.nvcc
def test_region_aliases_compile_for_sm90a():
    from tilelang_core.codegen.cuda.generate import generate
    from tilelang_core.runtime.artifact import compile_cubin

    assert compile_cubin(generate(_kernel(GEMM), "sm_90a").source, "sm_90a")[:4] == b"\x7fELF"


@pytest.mark.parametrize("line, bad", [
    ("B[0, 0] = X_shared[0, 0]", "X_shared[0, 0]"),
    ("X_shared[0, 0] = 1.0", "X_shared[0, 0]"),
    ("T.clear(X_local[0:4, :])", "X_local[0:4, :]"),
    ("B[0, 0] = X_shared + 1.0", "X_shared + 1.0"),  # used as a scalar
])
def test_an_alias_indexed_again_is_refused_at_the_line(line, bad):
    src = GEMM.replace("        T.fill(C_local, 1.0)\n", f"        T.fill(C_local, 1.0)\n        {line}\n")
    errors = _errors(src)
    assert [d.code for d in errors] == ["bad-arguments"], [d.message for d in errors]
    assert "only valid as a tile-op operand" in errors[0].message
    assert textwrap.dedent(src).splitlines()[errors[0].span.line - 1].strip() == line
    assert bad in textwrap.dedent(src).splitlines()[errors[0].span.line - 1]


@pytest.mark.parametrize("old, new, code", [
    ("T.let(offset, ko * 16)", "T.let(ko, ko * 16)", "bad-arguments"),           # not a declared variable
    ("T.let(offset, ko * 16)", "T.let(offset, ko * 16, ko)", "unsupported-syntax"),  # the expression form
])
def test_let_misuse_is_reported(old, new, code):
    assert code in [d.code for d in _errors(GEMM.replace(old, new))]


@pytest.mark.tvm
def test_jit_kernel_run_once_calls_it_on_generated_inputs(tmp_path):
    """`kernel.run_once()` (TileLang's JITKernel method): the kernel once on the profiler's random inputs."""
    import runpy

    pytest.importorskip("torch")
    import tilelang_core

    path = tmp_path / "alias_gemm.py"
    path.write_text(textwrap.dedent(GEMM))
    kernel = tilelang_core.compile(runpy.run_path(str(path))["main"], out_idx=[2], target="cpu")
    out = kernel.run_once()
    assert tuple(out.shape) == (64, 64) and bool(out.isfinite().all()) and float(out.abs().max()) > 0


def test_a_slice_passed_to_a_builtin_the_checker_does_not_model_is_no_error():
    """`T.tcgen05_gemm(A_shared[stage, :, :], ...)` (the real sm100 examples) passes tile operands to a builtin the
    checker treats generically: no `bad-arguments` (the region-as-scalar rule made 48 false errors over the real
    examples/), only what the target says (needs-sm100)."""
    from tilelang_core import check_source

    src = (
        "import tilelang.language as T\n\n"
        "@T.prim_func\n"
        "def k(C: T.Tensor((64, 64), T.float32)):\n"
        "    with T.Kernel(1, threads=128):\n"
        "        A_shared = T.alloc_shared((2, 64, 64), T.float16)\n"
        "        C_local = T.alloc_fragment((64, 64), T.float32)\n"
        "        T.tcgen05_gemm(A_shared[0, :, :], A_shared[1, :, :], C_local)\n"
        "        T.copy(C_local, C)\n"
    )
    codes = {d.code for d in check_source(src, "sm100.py").diagnostics if d.is_error}
    assert "bad-arguments" not in codes and codes <= {"needs-sm100"}
