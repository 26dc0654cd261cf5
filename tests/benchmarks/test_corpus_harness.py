"""The run-the-main corpus harness on a small synthetic corpus: GPU shim, interception, outcomes, causes."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import corpus_run  # noqa: E402

pytestmark = pytest.mark.tvm

GEMM_MAIN = '''
import torch
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def add(N, block=64):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), B: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            for i in T.Parallel(block):
                C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
    return main


def main():
    assert torch.cuda.is_available() and torch.cuda.get_device_capability() == (9, 0)
    kernel = add(256)
    a = torch.randn(256, device="cuda")
    b = torch.randn(256).cuda()
    g = torch.Generator(device="cuda").manual_seed(0)
    torch.manual_seed(0)
    c = kernel(a, b)
    torch.testing.assert_close(c, a + b)
    {extra}


if __name__ == "__main__":
    main()
'''

BROKEN = '''
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def bad(N=128):
    @T.prim_func
    def main(A: T.Tensor((N,), "float32"), C: T.Tensor((N,), "float32")):
        with T.Kernel(1, threads=2048) as bx:
            for i in T.Parallel(N):
                C[i] = A[i]
    return main


bad()
'''


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("examples")
    (root / "ok").mkdir()
    (root / "ok" / "example_add.py").write_text(GEMM_MAIN.replace("{extra}", "print('done')"))
    (root / "ok" / "example_wrong.py").write_text(GEMM_MAIN.replace("{extra}", "assert False, 'its own check'"))
    (root / "bad").mkdir()
    (root / "bad" / "example_bad.py").write_text(BROKEN)
    (root / "bad" / "example_dep.py").write_text("import tilelang\nimport not_a_real_package_xyz\n"
                                                  "@tilelang.jit\ndef f():\n    pass\n")
    (root / "bad" / "test_driver.py").write_text("import tilelang\n@tilelang.jit\ndef f():\n    pass\n")
    return root


def test_kernel_files_skip_drivers(corpus):
    names = sorted(p.name for p in corpus_run.kernel_files(corpus))
    assert names == ["example_add.py", "example_bad.py", "example_dep.py", "example_wrong.py"]


def _rows(corpus: Path, mode: str) -> dict:
    rows = corpus_run.run_corpus(corpus, mode, jobs=2, timeout=240, only=[], cuda_dir=None)
    return {Path(r["rel"]).name: r for r in rows}


@pytest.mark.nvcc
def test_cuda_mode_lowers_first_kernel_and_classifies(corpus):
    rows = _rows(corpus, "cuda")
    assert rows["example_add.py"]["outcome"] == "lowered"
    assert rows["example_add.py"]["kernels"][0]["cubin_bytes"] > 0
    bad = rows["example_bad.py"]
    assert bad["outcome"] == "failed" and bad["cause"].startswith("diagnostic: threads-exceeded: ")
    assert bad["error"]["diagnostics"][0]["line"] == 10  # the T.Kernel line of the user's file
    assert rows["example_dep.py"]["outcome"] == "excluded"
    summary = corpus_run.summarize(list(rows.values()), "cuda", {"ok/example_add.py", "ok/other.py"})
    assert summary["reference_not_ours"] == ["ok/other.py"] and summary["python_tracebacks_in_core"] == 0


def test_cpu_mode_runs_the_files_own_checks(corpus):
    rows = _rows(corpus, "cpu")
    assert rows["example_add.py"]["outcome"] == "matched"
    assert rows["example_add.py"]["kernels"][0]["runs"] == 1
    wrong = rows["example_wrong.py"]
    assert wrong["outcome"] == "failed" and wrong["cause"].startswith("result mismatch: AssertionError")


def test_child_writes_json_for_a_syntax_error(tmp_path):
    bad = tmp_path / "example_syntax.py"
    bad.write_text("import tilelang\n@tilelang.jit\ndef f(:\n")
    out = tmp_path / "r.json"
    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "corpus_child.py"), "--mode", "cpu", "--out",
                    str(out), str(bad)], check=True, timeout=120, capture_output=True)
    row = json.loads(out.read_text())
    assert row["status"] == "exception" and row["error"]["type"] == "SyntaxError"


def test_unsupported_feature_is_its_own_cause():
    frames = [{"file": str(ROOT / "tilelang_core" / "compat" / "__init__.py"), "line": 30, "func": "__call__"}]
    err = {"type": "UnsupportedFeatureError", "frames": frames,
           "message": "tilelang.tools.plot_layout is not supported by tilelang_core: ..."}
    assert corpus_run._cause(err, [], "cuda").startswith("unsupported: UnsupportedFeatureError: tilelang.tools")


def test_a_file_that_builds_its_own_cuda_torch_extension_is_excluded():
    err = {"type": "OSError", "frames": [], "message": "CUDA_HOME environment variable is not set. Please set it"}
    text = "from torch.utils.cpp_extension import load\n@tilelang.jit\n"
    assert corpus_run._excluded(err, text, "minference/x.py").startswith("needs a real GPU: it builds and runs")
    assert corpus_run._excluded(err, "@tilelang.jit\n", "x.py") is None


def test_a_traceback_from_our_code_is_counted_even_in_a_file_that_needs_sm100():
    frames = [{"file": "/x/examples/gemm_sm100.py", "line": 8, "func": "gemm"},
              {"file": str(ROOT / "tilelang_core" / "language" / "__init__.py"), "line": 179, "func": "ceildiv"}]
    row = {"file": "gemm_sm100.py", "status": "exception", "kernels": [],
           "error": {"type": "RuntimeError", "frames": frames, "message": "T.ceildiv of symbolic values"}}
    text = "@tilelang.jit\nC_tmem = T.alloc_tmem([128, 128], T.float32)\n"
    assert corpus_run.classify(row, text, "cuda") == ("failed", "internal: RuntimeError: T.ceildiv of symbolic values")
    row["error"] = {"type": "CompileError", "frames": frames, "message": "needs-sm100",
                    "diagnostics": [{"code": "needs-sm100", "message": "tensor memory needs sm_100"}]}
    assert corpus_run.classify(row, text, "cuda") == ("excluded", "needs SM100/SM120 (Blackwell)")


def test_the_shim_computes_fp16_gemms_in_float32_and_returns_fp16():
    code = ("from tilelang_core.runtime import cpu_device; cpu_device.install(); import torch\n"
            "a = torch.randn(8, 64, 32, device='cuda').half(); b = torch.randn(8, 32, 16, device='cuda').half()\n"
            "ref = (a.float() @ b.float()).half()\n"
            "for out in (a @ b, torch.bmm(a, b), torch.einsum('bij,bjk->bik', a, b),\n"
            "            torch.nn.functional.linear(a, b.transpose(1, 2)[0])):\n"
            "    assert out.dtype == torch.float16 and out.device.type == 'cpu', out.dtype\n"
            "assert torch.equal(a @ b, ref)\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=120, env=dict(os.environ, PYTHONPATH=str(ROOT)))
