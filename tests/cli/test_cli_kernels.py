"""`tilelsp check` on real kernels: shape errors with related notes, per-target limits, suppression and config."""
from __future__ import annotations

import json

import pytest

from tilelsp import cli

KERNEL = '''import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=128, stages=2, kb=128):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((kb, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * kb, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


kernel = matmul(1024, 1024, 1024)
'''
GEMM_LINE = 17  # the T.gemm line (1-based)
KERNEL_LINE = 9  # the `with T.Kernel` line


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def check(capsys, *argv) -> tuple[int, list[dict]]:
    code = cli.main(["check", *argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_clean_kernel(project, capsys):
    (project / "k.py").write_text(KERNEL)
    assert check(capsys, "k.py") == (0, [])


def test_gemm_k_mismatch_with_related_allocations_and_suppression(project, capsys):
    bad = KERNEL.replace("kb=128)", "kb=64)")
    (project / "k.py").write_text(bad)
    code, diags = check(capsys, "k.py")
    assert code == 1
    gemm = [d for d in diags if d["code"] == "gemm-shape-mismatch"]
    assert len(gemm) == 1 and gemm[0]["line"] == GEMM_LINE and gemm[0]["column"] == 17
    assert "A_shared allocated here" in [r["message"] for r in gemm[0]["related"]]
    assert gemm[0]["kernel"] == "main" and "1024" in gemm[0]["instance"]
    lines = bad.splitlines()
    lines[GEMM_LINE - 1] += "  # tilelsp: ignore[gemm-shape-mismatch]"
    (project / "k.py").write_text("\n".join(lines) + "\n")
    code, diags = check(capsys, "k.py")
    assert "gemm-shape-mismatch" not in [d["code"] for d in diags]


def test_shared_memory_limit_per_target(project, capsys):
    (project / "k.py").write_text(KERNEL)  # 2 stages x (32 KiB + 32 KiB) = 128 KiB
    code, diags = check(capsys, "k.py", "--target", "sm_80,sm_86", "--target", "sm_90a")
    assert code == 1
    assert [(d["code"], d["target"], d["line"]) for d in diags] == [("shared-memory-exceeded", "sm_86", KERNEL_LINE)]
    assert "128 KiB" in diags[0]["message"]
    assert check(capsys, "k.py", "--target", "sm_90a")[0] == 0


def test_pyproject_targets_and_flag_override(project, capsys):
    (project / "k.py").write_text(KERNEL)
    (project / "pyproject.toml").write_text('[tool.tilelsp]\ntargets = ["sm_86"]\n')
    assert check(capsys, "k.py")[0] == 1
    assert check(capsys, "k.py", "--target", "sm_90a")[0] == 0
    (project / "pyproject.toml").write_text('[tool.tilelsp]\ntargets = ["sm_86"]\nignore = ["shared-memory-exceeded"]\n')
    assert check(capsys, "k.py") == (0, [])


def test_text_output_for_a_real_error(project, capsys):
    (project / "k.py").write_text(KERNEL.replace("kb=128)", "kb=64)"))
    code = cli.main(["check", "k.py", "--select", "gemm-shape-mismatch"])
    out = capsys.readouterr().out.splitlines()
    assert code == 1
    assert out[0].startswith(f"k.py:{GEMM_LINE}:17: error[gemm-shape-mismatch] ")
    assert out[1].endswith("T.gemm(A_shared, B_shared, C_local)")
    assert out[2].endswith("^" + "~" * (len("T.gemm(A_shared, B_shared, C_local)") - 1))
    assert any(line.startswith("  note: k.py:10:") for line in out)
    assert out[-1] == "1 error, 0 warnings in 1 file"


def test_suppressing_a_per_target_error_on_the_kernel_line(project, capsys):
    lines = KERNEL.splitlines()
    lines[KERNEL_LINE - 1] += "  # tilelsp: ignore[shared-memory-exceeded]"
    (project / "k.py").write_text("\n".join(lines) + "\n")
    assert check(capsys, "k.py", "--target", "sm_86") == (0, [])
    (project / "k.py").write_text("# tilelsp: ignore-file[shared-memory-exceeded]\n" + KERNEL)
    assert check(capsys, "k.py", "--target", "sm_86") == (0, [])
