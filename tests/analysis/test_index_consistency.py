"""inconsistent-indexing: a variable that moves to an axis of another dimension of the same tensor or tile is
flagged at the odd access (the bug's line); square tensors and tiles, and other launches' variables, are not."""
from __future__ import annotations

from pathlib import Path

import pytest

from tilelang_core.analysis.index_consistency import inconsistent_index_warnings
from tilelang_core.check import check_source

CASES = Path(__file__).parent / "index_cases"
BUGS = ["residual_read_transposed.py", "mask_loop_swapped_extents.py"]


@pytest.mark.parametrize("name", BUGS)
def test_the_transposed_access_is_flagged_at_its_line(name):
    text = (CASES / name).read_text()
    bug_lines = {i + 1 for i, t in enumerate(text.splitlines()) if "# bug" in t}
    found = [d for d in check_source(text, name).diagnostics if d.code == "inconsistent-indexing"]
    assert found and {d.span.line for d in found} == bug_lines, [(d.span.line, d.message) for d in found]
    assert all(d.severity.value == "warning" and d.related for d in found)


def test_a_square_tensor_and_tile_may_be_read_transposed():
    assert inconsistent_index_warnings((CASES / "clean_square_transpose.py").read_text()) == []


def test_the_fixed_residual_is_clean():
    text = (CASES / "residual_read_transposed.py").read_text()
    fixed = text.replace("X[bx * block_N, by * block_M], R_shared", "X[by * block_M, bx * block_N], R_shared")
    assert fixed != text and inconsistent_index_warnings(fixed) == []


def test_each_launch_has_its_own_variables():
    text = '''
import tilelang.language as T
@T.prim_func
def f(P: T.Tensor((B, S, 8), "float32"), O: T.Tensor((B, 8), "float32")):
    with T.Kernel(B, S) as (bx, bz):
        P[bx, bz, 0] = 1.0
    with T.Kernel(S, B) as (bz, bx):
        O[bx, 0] = P[bx, bz, 0]
'''
    assert inconsistent_index_warnings(text) == []
    swapped = text.replace("O[bx, 0] = P[bx, bz, 0]", "O[bx, 0] = P[bx, bz, 0] + P[bz, bx, 0]")
    found = inconsistent_index_warnings(swapped)
    assert [d.span.line for d in found] == [8] and found[0].span.col > swapped.splitlines()[7].index("+")
