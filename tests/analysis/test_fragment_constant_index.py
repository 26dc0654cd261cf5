"""fragment-constant-index: a fragment nothing lays out, accessed at a constant non-zero index in T.Parallel, and
needs-sm90: T.wgmma_gemm built for a pre-Hopper GPU; both as the checker and the lowering gate report them."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core.check import check_source
from tilelang_core.diagnostics import CompileError

HEAD = "import tilelang.language as T\n\n"


def _kernel(body: str) -> str:
    return HEAD + textwrap.dedent("""\
        @T.prim_func
        def main(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32")):
            with T.Kernel(1, threads=128):
                frag = T.alloc_fragment((4,), "float32")
        """) + textwrap.indent(textwrap.dedent(body), " " * 8)


def _errors(text: str, targets=("sm_90a",)) -> list:
    return [d for d in check_source(text, "k.py", targets=targets).diagnostics if d.is_error]


@pytest.mark.parametrize("body", [
    "for i in T.Parallel(4):\n    frag[1] = A[i]\n",
    "for i in T.Parallel(4):\n    frag[0] = A[i]\n    frag[1] = A[i]\n",
    "for i in T.Parallel(4):\n    B[i] = frag[2]\n",
])
def test_constant_nonzero_index_of_an_unlaid_fragment_is_an_error(body):
    (err,) = _errors(_kernel(body))
    assert err.code == "fragment-constant-index"
    assert "Only fragment[0] access is allowed" in err.message
    assert err.related and err.related[0].span.line == 6  # the T.alloc_fragment line


@pytest.mark.parametrize("body", [
    "for i in T.Parallel(4):\n    frag[0] = A[i]\n",                       # element 0: replicated is fine
    "for i in T.Parallel(4):\n    frag[i] = A[i]\nfor i in T.Parallel(4):\n    B[i] = frag[1]\n",  # laid out by frag[i]
    "T.fill(frag, 0)\nfor i in T.Parallel(4):\n    B[i] = frag[1]\n",       # a tile op lays it out
    "frag[1] = A[0]\n",                                                     # not in a T.Parallel loop
])
def test_laid_out_or_element_zero_or_serial_is_accepted(body):
    assert [d.code for d in _errors(_kernel(body))] == []


WGMMA = HEAD + textwrap.dedent("""\
    @T.prim_func
    def main(A: T.Tensor((64, 16), "float16"), B: T.Tensor((16, 64), "float16"), C: T.Tensor((64, 64), "float32")):
        with T.Kernel(1, threads=128):
            A_s = T.alloc_shared((64, 16), "float16")
            B_s = T.alloc_shared((16, 64), "float16")
            C_l = T.alloc_fragment((64, 64), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.wgmma_gemm(A_s, B_s, C_l, clear_accum=True)
            T.copy(C_l, C)
    """)


def test_wgmma_gemm_needs_hopper():
    assert [d.code for d in _errors(WGMMA, ("sm_90a",))] == []
    (err,) = _errors(WGMMA, ("sm_80",))
    assert err.code == "needs-sm90" and "T.wgmma_gemm() requires Hopper WGMMA lowering" in err.message
    assert err.span.line == 11 and err.related[0].span.line == 6  # the call; A_s allocated here


def test_compile_error_message_shows_the_lines(tmp_path):
    path = tmp_path / "k.py"
    path.write_text(_kernel("for i in T.Parallel(4):\n    frag[1] = A[i]  # the store\n"))
    errors = _errors(path.read_text())
    text = str(CompileError(errors, str(path)))
    assert f"  --> {path}:8:" in text and "# the store" in text  # the access and its source line
    assert f"  --> {path}:6:" in text and "T.alloc_fragment((4,)" in text  # the allocation it names



@pytest.mark.tvm
def test_needs_sm90_is_tvms_internal_error_at_the_compile(run_aliased):
    import tvm.error

    import tilelang

    kernel = run_aliased("wgmma_sm80", WGMMA)["main"]
    with pytest.raises(tvm.error.InternalError, match=r"T\.wgmma_gemm\(\) requires Hopper WGMMA lowering"):
        tilelang.lower(kernel, target="sm_80")
    assert "wgmma" in tilelang.lower(kernel, target="sm_90a").kernel_source  # Hopper builds it as a wgmma
