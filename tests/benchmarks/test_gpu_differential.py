"""benchmarks/gpu_differential.py without a GPU: `build` writes loadable artifacts and saved tensors, the comparison
catches the reverted colsum miscompile (threads x the sum), and the revert still applies to the lowering."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import gpu_differential  # noqa: E402

COLSUM = {"family": "colsum", "atomic": "add", "M": 40, "N": 24, "dtype": "float16", "out_dtype": "float32"}
GEMM = {"family": "gemm", "atomic": "add", "M": 40, "N": 24, "K": 64, "dtype": "float16", "out_dtype": "float16"}


@pytest.mark.tvm
@pytest.mark.nvcc
def test_build_writes_loadable_artifacts_and_cpu_outputs(tmp_path):
    torch = pytest.importorskip("torch")
    from tilelang_core.runtime.artifact import Artifact

    subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu_differential.py"), "build", "--count", "3",
                    "--seed", "7", "--dir", str(tmp_path)], check=True, capture_output=True, timeout=600)
    manifest = json.loads((tmp_path / "manifest.json").read_text())
    assert len(manifest["items"]) + len(manifest["failures"]) == 3 and manifest["items"]
    for item in manifest["items"]:
        art = Artifact.load(tmp_path / "art" / item["meta"])
        assert art.arch == "sm_90a" and art.cubin
        data = torch.load(tmp_path / item["data"])
        for i in data["outputs"]:
            assert data["cpu"][i].shape == data["inputs"][i].shape
            assert not torch.equal(data["cpu"][i], data["inputs"][i])  # the CPU backend wrote its outputs


def test_compare_catches_threads_times_the_sum_and_accepts_rounding():
    torch = pytest.importorskip("torch")
    want = torch.randn(24) * 5
    assert gpu_differential.compare(COLSUM, want * (1 + 1e-7), want) is None
    assert "median got/want 128" in gpu_differential.compare(COLSUM, want * 128, want)
    assert gpu_differential.compare(COLSUM, torch.full_like(want, float("nan")), want)  # an unwritten output
    c = torch.randn(40, 24).half()
    assert gpu_differential.compare(GEMM, (c.float() * (1 + 4e-4)).half(), c) is None
    assert gpu_differential.compare(GEMM, c.flip(0), c)


def test_poison_keeps_atomic_start_values():
    torch = pytest.importorskip("torch")
    start = torch.zeros(8)
    assert torch.equal(gpu_differential.poison(start, "colsum"), start)
    assert gpu_differential.poison(start, "map").isnan().all()
    assert (gpu_differential.poison(start.int(), "imap") == -123456789).all()


def test_the_revert_still_applies_to_the_lowering():
    text = (ROOT / "tilelang_core" / "codegen" / "cuda" / "parallel.py").read_text()
    for old, _ in gpu_differential.REVERT:
        assert text.count(old) == 1, old
