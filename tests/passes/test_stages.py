"""Pass tests as before/expected printed text, and the stage list of the named pipeline."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from tilelang_core import check_source
from tilelang_core.passes.ir_text import func_str
from tilelang_core.passes.legalize import legalize
from tilelang_core.lowering import lower, stage_names
from tilelang_core.passes.plan import plan_pipelines, swizzled_buffers
from tests.conftest import EXAMPLES, ROOT

SRC = textwrap.dedent('''
    import tilelang.language as T

    def copy_kernel(M=64, N=64):
        @T.prim_func
        def main(A: T.Tensor((M, N), "float16"), B: T.Tensor((M, N), "float16")):
            with T.Kernel(1, threads=128) as bx:
                S = T.alloc_shared((16, N), "float16")
                for k in T.Pipelined(M // 16, num_stages=2):
                    T.copy(A[k * 16, 0], S)
                    T.copy(S, B[k * 16, 0])

        return main

    copy_kernel()
''')


def _func():
    res = check_source(SRC, "copy.py")
    assert not res.errors, res.errors
    return res.kernels[0]


def test_legalize_makes_head_address_copies_explicit():
    before = func_str(_func())
    after = func_str(legalize(_func()))
    assert "T.copy(A[k * 16, 0], S)" in before
    assert "T.copy(A[k * 16:k * 16 + 16, :], S)" in after
    assert "T.copy(S, B[k * 16:k * 16 + 16, :])" in after


def test_pipeline_plan_text():
    func = legalize(_func())
    plans = list(plan_pipelines(func).values())
    assert [p.describe() for p in plans] == [
        "# pipeline k: 2 stages, 1 async producer copies (S), 1 consumer statements"]


def test_gemm_plan_and_swizzle():
    path = EXAMPLES / "gemm.py"
    func = legalize(check_source(path.read_text(), str(path)).kernels[0])
    plan = list(plan_pipelines(func).values())[0]
    assert plan.num_stages == 3 and [b.name for b in plan.buffers] == ["A_shared", "B_shared"]
    assert sorted(b.name for b in swizzled_buffers(func)) == ["A_shared", "B_shared"]


def test_stage_names_and_targets():
    assert stage_names("sm_80") == ("parsed", "legalized", "pipelined", "layouts", "lowered", "tir", "cuda")
    assert stage_names("llvm") == ("parsed", "legalized", "tir", "llvm")
    assert stage_names({"kind": "cuda", "arch": "sm_86"})[-1] == "cuda"
    with pytest.raises(ValueError):
        stage_names("sm_99")


def test_lowered_stage_text_for_the_pipelined_copy():
    res = lower(_func(), "sm_80", until="lowered")
    assert list(res.stages) == ["parsed", "legalized", "pipelined", "layouts", "lowered"]
    text = res.stages["lowered"]
    assert 'S = T.decl_buffer((2, 16, 64), "float16"' in text  # double-buffered
    assert 'T.cuda.func_call("tl::cp_async<16>"' in text
    assert 'T.cuda.func_call("tl::cp_async_wait<0>", source_code="")' in text


def test_stages_before_tir_never_import_tvm():
    code = ("import sys; sys.path.insert(0, %r)\n" % str(ROOT) +
            "from tests.passes.test_stages import _func\n"
            "from tilelang_core.lowering import lower\n"
            "lower(_func(), 'sm_90a', until='lowered')\n"
            "print('tvm' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.stdout.strip() == "False", out.stderr[-2000:]
