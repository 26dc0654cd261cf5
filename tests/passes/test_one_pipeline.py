"""One gate in front of every lowering: what the checks reject never becomes code (no tvm needed to refuse)."""
from pathlib import Path

import pytest

from tilelang_core.check import check_source
from tilelang_core.diagnostics import CompileError
from tilelang_core.lowering import lower
from tilelang_core.runtime.artifact import build_artifact

ROOT = Path(__file__).parents[2]
K_MISMATCH = (ROOT / "examples" / "errors" / "gemm_k_mismatch.py").read_text()
UNDEFINED = (ROOT / "examples" / "gemm.py").read_text().replace("T.clear(C_local)", "T.clear(C_locl)")


def _kernel(text):
    (func,) = check_source(text, "k.py").kernels
    return func


@pytest.mark.parametrize("text, code", [(K_MISMATCH, "gemm-shape-mismatch"), (UNDEFINED, "undefined-name")])
@pytest.mark.parametrize("target", ["sm_90a", "cpu"])
def test_lower_refuses_what_the_checks_reject(text, code, target):
    func = _kernel(text)
    with pytest.raises(CompileError) as info:
        lower(func, target)
    assert code in [d.code for d in info.value.diagnostics]
    assert all(d.span.line > 1 for d in info.value.diagnostics)


def test_artifacts_refuse_before_the_cache(tmp_path):
    from tilelang_core.runtime.cache import ArtifactCache

    with pytest.raises(CompileError, match="gemm-shape-mismatch"):
        build_artifact(_kernel(K_MISMATCH), "sm_90a", cache=ArtifactCache(tmp_path))


@pytest.mark.parametrize("target", ["cpu", "sm_90a"])
def test_jit_refuses_a_kernel_with_frontend_errors(target):
    from tilelang_core.runtime.jit import JITKernel

    with pytest.raises(CompileError, match="undefined-name"):
        JITKernel(_kernel(UNDEFINED), target=target)


def test_editor_views_return_diagnostics_not_code():
    from tilelsp.features import ir_view

    req = {"text": K_MISMATCH, "path": "k.py", "targets": ["sm_90a"], "stage": "cuda"}
    with pytest.raises(CompileError, match="gemm-shape-mismatch"):
        ir_view.show_ir(dict(req, op="show_ir"))
    saved = ir_view.lower_file(dict(req, op="lower"))
    assert [d["code"] for d in saved["diagnostics"]] == ["gemm-shape-mismatch"]
    assert all(e.get("cuda") is None for e in saved["entries"])


def test_cpu_ignores_gpu_budgets_only():
    text = (ROOT / "examples" / "errors" / "shared_memory_exceeded.py").read_text()
    funcs = check_source(text, "s.py").kernels
    with pytest.raises(CompileError, match="shared-memory-exceeded"):
        lower(funcs[0], "sm_90a", until="parsed")
    assert "parsed" in lower(funcs[0], "cpu", until="parsed").stages
