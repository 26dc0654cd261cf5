"""`for i in range(10, 0, -1)` / `T.serial(15, -1, -3)`: a loop with a negative constant step counts its trips
(ceil((start - stop) / step), none when start <= stop) and its name reads start - trip * step; it used to be refused
for a "negative trip count"."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

SRC = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((16,), T.int32)):
    with T.Kernel(1, threads=1):
        for i in range(10, 0, -1):
            A[10 - i] = i
        for i in T.serial(15, 10, -3):
            A[i] = i + 100
        for j in range(3, 5, -1):
            A[0] = 7
"""


def _kernel():
    res = check_source(textwrap.dedent(SRC), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


def test_a_descending_range_parses_as_a_trip_count_loop():
    trips = [s.extents[0].value for s in _kernel().body.stmts[0].body.stmts]
    assert trips == [10, 2, 0]


@pytest.mark.tvm
def test_descending_loops_run_on_the_cpu_backend():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    out = torch.zeros(16, dtype=torch.int32)
    cpu.build(_kernel())(out)
    expected = torch.zeros(16, dtype=torch.int32)
    expected[:10] = torch.arange(10, 0, -1, dtype=torch.int32)
    expected[15], expected[12] = 115, 112
    assert torch.equal(out, expected)
