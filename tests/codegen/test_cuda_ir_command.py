"""`tilelsp ir`: stage listing, the CUDA stage, and diagnostics for a broken file."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import EXAMPLES, ROOT


def _ir(*args):
    return subprocess.run([sys.executable, "-m", "tilelsp", "ir", *args], capture_output=True, text=True, cwd=ROOT)


def test_list_stages():
    out = _ir(str(EXAMPLES / "gemm.py"), "--list-stages")
    assert out.returncode == 0
    assert out.stdout.split() == ["parsed", "legalized", "pipelined", "layouts", "lowered", "tir", "cuda"]
    cpu = _ir(str(EXAMPLES / "gemm.py"), "--list-stages", "--target", "cpu")
    assert cpu.stdout.split() == ["parsed", "legalized", "tir", "llvm"]


@pytest.mark.tvm
def test_cuda_stage_has_the_kernel():
    out = _ir(str(EXAMPLES / "softmax.py"), "--stage", "cuda", "--target", "sm_80")
    assert out.returncode == 0, out.stderr
    assert "__global__" in out.stdout and "row_softmax_kernel" in out.stdout


def test_layouts_stage_by_kernel_name():
    out = _ir(str(EXAMPLES / "flash_attention.py"), "--kernel", "mha_fwd", "--stage", "layouts", "--target", "sm_80")
    assert out.returncode == 0, out.stderr
    assert "scores: mma.m16n8 64x64 warps 4x1" in out.stdout


def test_errors_print_diagnostics_and_exit_1(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import tilelang.language as T\n\n@T.prim_func\ndef k(A: T.Tensor((4,), 'float32')):\n"
                   "    with T.Kernel(1, threads=32) as bx:\n        T.copy(A, B_missing)\n")
    out = _ir(str(bad), "--stage", "parsed")
    assert out.returncode == 1
    assert "bad.py:6:" in out.stderr


def test_unknown_stage_and_kernel():
    assert _ir(str(EXAMPLES / "gemm.py"), "--stage", "nope").returncode == 2
    assert _ir(str(EXAMPLES / "gemm.py"), "--kernel", "nope").returncode == 2  # usage, as in verify
