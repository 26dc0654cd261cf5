"""tile-index-mismatch: a block or loop variable that counts tiles of one size, scaled by another in an offset (or
counting in another size than all of its offsets step by), is a warning at the line that mixes them up; kernels
whose variables count what they step by get none."""
from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BUGS = ROOT / "tests/verify/oracle_cases/bugs"


def _warnings(text: str) -> list[tuple[int, str]]:
    from tilelang_core.check import check_source

    return [(d.span.line, d.message) for d in check_source(text, "k.py").diagnostics if d.code == "tile-index-mismatch"]


def _line(text: str, marker: str) -> int:
    return next(k for k, ln in enumerate(text.splitlines(), 1) if marker in ln)


@pytest.mark.parametrize("name,marker,words", [
    ("gemm_swapped_block_index.py", "T.copy(C_local, C[bx * block_M", "`bx` counts tiles of block_N (T.ceildiv(N, "
     "block_N)) but is scaled by block_M here"),
    ("gemm_k_loop_counts_m_tiles.py", "T.Pipelined(T.ceildiv(K, block_M)", "`ko` counts tiles of block_M (T.ceildiv(K, "
     "block_M)) but every offset built from it steps by block_K"),
    ("attention_v_tile_uses_block_m.py", "T.copy(V[bz, by, k * block_M, 0]", "`k` counts tiles of block_N"),
    ("causal_mask_query_offset.py", "bx * block_N + i >=", "`bx` counts tiles of block_M (T.ceildiv(seq_len, "
     "block_M)) but is scaled by block_N here"),
])
def test_a_tile_index_built_from_the_other_size_is_a_warning_at_its_line(name, marker, words):
    text = (BUGS / name).read_text()
    found = _warnings(text)
    assert found and found[0][0] == _line(text, marker) and words in found[0][1], found


def test_correct_kernels_and_products_of_the_counted_sizes_are_quiet():
    texts = [p.read_text() for p in sorted((ROOT / "examples").rglob("*.py"))]
    texts += [p.read_text() for p in sorted((ROOT / "tests/verify/oracle_cases/clean").glob("*.py"))]
    texts.append('''
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1])
def add_one(length=256, block1=8, block2=2):
    @T.prim_func
    def main(A: T.Tensor((length,), "float32"), B: T.Tensor((length,), "float32")):
        with T.Kernel(1, threads=128) as _:
            for i in T.serial(length // block1 // block2):  # i counts block1 * block2 elements
                for j in T.Parallel(block1):
                    for k in T.serial(block2):
                        B[i * block1 * block2 + j * block2 + k] = A[i * block1 * block2 + j * block2 + k] + 1.0

    return main
''')
    assert [w for t in texts for w in _warnings(t)] == []
