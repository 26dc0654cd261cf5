"""Facts and checks on real TileLang source through check_source (hover data, targets, speed of the path)."""
from __future__ import annotations

from pathlib import Path

from tilelang_core import check_source

ROOT = Path(__file__).resolve().parents[2]

GEMM = '''import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=64, num_stages=3):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


kernel = matmul(4096, 4096, 4096)
'''


def _line_of(text: str, needle: str) -> tuple[int, int]:
    for n, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return n, line.index(needle)
    raise AssertionError(needle)


def test_buffer_and_kernel_facts_from_source():
    r = check_source(GEMM, "gemm.py", targets=("sm_90a", "sm_86"))
    assert r.errors == []
    line, col = _line_of(GEMM, "T.alloc_shared((block_M")  # the declaration span is the T.alloc_* call
    fact = r.facts.at(line, col + 2)
    assert (fact.name, fact.scope, fact.shape, fact.dtype, fact.bytes, fact.stages) == (
        "A_shared", "shared.dyn", (128, 64), "float16", 16384, 3)
    use_line, use_col = _line_of(GEMM, "T.gemm(A_shared")
    assert r.facts.at(use_line, use_col + 8).name == "A_shared"
    k = r.facts.kernels[0]
    assert k.threads == 256 and k.grid == (32, 32)
    assert k.smem_bytes == {"sm_90a": 3 * (16384 + 16384), "sm_86": 3 * (16384 + 16384)}
    assert k.smem_limit == {"sm_90a": 232448, "sm_86": 101376}
    assert k.registers == 64
    assert ("B_shared", 16384, 3) in k.smem_breakdown


def test_same_file_overflows_only_on_the_smaller_arch():
    text = GEMM.replace("block_K=64", "block_K=128")  # 3 stages x 64 KiB = 192 KiB
    r = check_source(text, "gemm.py", targets=("sm_90a", "sm_86"))
    over = [d for d in r.diagnostics if d.code == "shared-memory-exceeded"]
    assert [d.target for d in over] == ["sm_86"]
    assert over[0].span.line == _line_of(text, "with T.Kernel")[0]
    assert over[0].data["max_stages_that_fit"] == 1 and "sm_86" in over[0].message
    assert "lower num_stages to 1 or shrink" in over[0].message and "block_K" in over[0].message


def test_unknown_factory_arguments_give_no_errors():
    text = GEMM.replace("kernel = matmul(4096, 4096, 4096)\n", "")
    r = check_source(text, "gemm.py")
    assert r.errors == [] and r.kernels
