"""The peer-suite harness: which tests count, how failures are classified, and one synthetic suite run end to end."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import peer_outcomes  # noqa: E402
import peer_rules  # noqa: E402

RULES_FILE = '''
import tilelang
import tilelang.testing
from tilelang.transform import PassConfigKey
from tilelang.engine import lower_internal


def _check_source(kernel):
    src = kernel.get_kernel_source()
    assert "ld.global.v4" in src


def test_numbers():
    assert PassConfigKey is not None  # a user-facing name from tilelang.transform


def test_codegen_text():
    _check_source(None)


def test_engine():
    lower_internal(None)


@tilelang.testing.requires_cuda_compute_version_ge(10, 0)
def test_blackwell():
    pass


def test_comment_only():
    # we dispatch to hip on AMD GPUs
    pass


def _line_of(code):
    return next(line for line in code.splitlines() if "isfinite" in line)


def test_a_line_picked_out_of_the_source():
    assert "isfinite(" in _line_of(tilelang.lower(None).kernel_source)


def test_a_multiline_assert_on_the_source(code):
    assert (
        "*(float4*)(B + i)"
        in code
    )


class TestGroup:
    def test_method(self):
        pass
'''


def test_rules_read_the_subject_through_helpers_and_imports(tmp_path):
    path = tmp_path / "test_rules.py"
    path.write_text(RULES_FILE)
    assert peer_rules.classify_file(path) == {
        "test_numbers": None, "test_codegen_text": "generated-code-text", "test_engine": "tilelang-internals",
        "test_blackwell": "sm100-or-newer", "test_comment_only": None, "TestGroup::test_method": None,
        "test_a_line_picked_out_of_the_source": "generated-code-text",
        "test_a_multiline_assert_on_the_source": "generated-code-text"}


def test_function_of_strips_path_and_parameters():
    assert peer_rules.function_of("a/test_x.py::test_y[float16-128]") == "test_y"
    assert peer_rules.function_of("test_x.py::TestGroup::test_m") == "TestGroup::test_m"


def _exc(kind, message="", files=("/tests/test_x.py",), codes=None):
    return {"type": kind, "message": message, "frames": [{"file": f, "line": 1, "func": "f"} for f in files],
            "codes": codes}


@pytest.mark.parametrize("exc, outcome", [
    (_exc("PeerTestTimeout"), "hang"),
    (_exc("Failed", "DID NOT RAISE <class 'ValueError'>"), "wrong"),
    (_exc("CompileError", codes=["unknown-builtin"]), "refused"),
    (_exc("CompileError", codes=["codegen-error"]), "crash"),
    (_exc("UnknownTargetError", "unknown target 'sm_75' (compute capability 7.5): ...",
          files=("/tests/test_x.py", "/x/tilelang_core/target.py")), "refused"),
    (_exc("AttributeError", "module 'tilelang_core.language' has no attribute 'Var'"), "missing"),
    (_exc("TypeError", "get_kernel_source() got an unexpected keyword argument 'kernel_only'",
          files=("/tests/test_x.py", "/x/tilelang_core/runtime/kernel.py")), "missing"),
    (_exc("AssertionError", "Tensor-likes are not close!"), "wrong"),
    (_exc("AssertionError", "", files=("/tests/test_x.py", "/x/tilelang_core/passes/plan.py")), "crash"),
    (_exc("KeyError", "'x'", files=("/tests/test_x.py", "/x/tilelang_core/codegen/cpu/ops.py")), "crash"),
])
def test_failures_are_classified(exc, outcome):
    assert peer_outcomes.classify_exception(exc) == outcome


def test_a_function_takes_its_worst_case():
    assert peer_outcomes.worst(["pass", "refused", "pass"]) == "refused"
    assert peer_outcomes.worst(["pass", "wrong", "crash"]) == "wrong"
    assert peer_outcomes.worst(["skipped", "pass"]) == "pass"
    assert peer_outcomes.worst(["skipped"]) == "skipped"


SUITE_FILE = '''
import pytest
import torch
import tilelang
import tilelang.testing
import tilelang.language as T


def add(N, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
    return main


@pytest.mark.parametrize("n", [64, 128])
def test_add(n):
    kernel = tilelang.compile(add(n), out_idx=[-1])
    a = torch.randn(n, device="cuda")
    b = torch.randn(n, device="cuda")
    torch.testing.assert_close(kernel(a, b), a + b)


def test_add_wrong():
    kernel = tilelang.compile(add(64), out_idx=[-1])
    a = torch.randn(64, device="cuda")
    torch.testing.assert_close(kernel(a, a), a)


def test_missing_name():
    tilelang.no_such_api_in_any_tilelang()


def test_amd():
    assert tilelang.compile is not None, "metal"
'''


@pytest.mark.tvm
def test_a_synthetic_suite_runs_end_to_end(tmp_path):
    folder = tmp_path / "python" / "language"
    folder.mkdir(parents=True)
    (folder / "test_suite.py").write_text(SUITE_FILE)
    out = tmp_path / "out.json"
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "peer_suite.py"), str(tmp_path / "python"),
                           "--folders", "language", "-j", "1", "--json", str(out)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    rows = {r["function"]: r for r in json.loads(out.read_text())["rows"]}
    assert rows["test_add"]["verdict"] == "pass" and rows["test_add"]["cases"] == 2
    assert rows["test_add_wrong"]["verdict"] == "wrong"
    assert rows["test_missing_name"]["verdict"] == "missing"
    assert rows["test_amd"]["counted"] is False and rows["test_amd"]["rule"] == "amd-metal-webgpu"
    assert "| language | 3 | 1 | 0 | 1 | 0 | 0 | 1 | 33.3 | 1 |" in proc.stdout


def test_cuda_summary_counts_every_failed_build_and_leaves_out_cpu_rejected_kernels():
    import peer_suite

    builds = [{"kernel": "k", "ok": True}] + [{"kernel": "k", "ok": False, "error": "e"} for _ in range(5)] + [
        {"kernel": "bad", "ok": False, "error": "e", "cpu_rejected": True}]
    counts = peer_suite.build_counts(builds)
    assert (counts["ok"], counts["n_failed"], len(counts["failed"]), counts["cpu_rejected"]) == (1, 5, 3, 1)
    rows = [{"file": "test_a.py", "counted": True, "verdict": "pass", "cuda_builds": counts},
            {"file": "test_b.py", "counted": True, "verdict": "pass", "cuda_builds": peer_suite.build_counts(
                [{"kernel": "k", "ok": True}] * 4)},
            {"file": "test_b.py", "counted": True, "verdict": "wrong", "cuda_builds": counts}]
    lines = peer_suite.cuda_summary(rows).splitlines()
    assert lines == ["test_a.py: 1/6", "test_b.py: 4/4", "sm_90a builds of passing tests' kernels: 5/10 (50.0 %)"]
