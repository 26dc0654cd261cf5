"""The analysis inside `while` loops: counters are unknown (no false out-of-bounds), constant
out-of-range indices and structure rules are still reported."""
from __future__ import annotations

from tilelang_core import check_source

HEAD = """import tilelang
import tilelang.language as T


@T.prim_func
def k(A: T.Tensor((8, 16), T.float32), B: T.Tensor((8, 16), T.float32)):
    with T.Kernel(8, threads=32) as bx:
        S = T.alloc_shared((16,), T.float32)
        j = T.alloc_var(T.int32)
        j = 0
        i = 0
        while j < 16:
"""


def _codes(body: str):
    src = HEAD + "".join("            " + ln + "\n" for ln in body.splitlines())
    res = check_source(src, "w.py")
    return [(d.code, src.splitlines()[d.span.line - 1].strip()) for d in res.diagnostics if d.is_error]


def test_counter_indices_are_not_reported():
    assert _codes("B[bx, j] = A[bx, j] + A[bx, 15 - j]\nt = j * 4\nS[t] = 1.0\nj += 1") == []


def test_constant_indices_are_still_checked():
    assert _codes("S[i + 15] = 0.0\nS[16] = 1.0\nj += 1") == [("index-out-of-bounds", "S[16] = 1.0")]


def test_structure_rules_apply_inside():
    found = _codes("for p in T.Parallel(16):\n    T.copy(A[bx, 0:16], S)\nj += 1")
    assert len(found) == 1 and found[0][1] == "T.copy(A[bx, 0:16], S)"
