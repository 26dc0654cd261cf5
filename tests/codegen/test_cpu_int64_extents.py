"""A grid or loop extent of int64 (a `T.symbolic("n", "int64")` dim) gets an int64 loop variable on the CPU
backend: TVM refuses a loop variable narrower than its extent (it was a codegen-error)."""
from __future__ import annotations

import runpy
import textwrap

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

KERNELS = '''
import tilelang_core as tilelang
import tilelang_core.language as T


@tilelang.jit(target="cpu")
def fill(value: float):
    n = T.symbolic("n", "int64")

    @T.prim_func
    def main(x: T.Tensor[n, T.bfloat16], y: T.Tensor[(n, 2), T.float32]):
        with T.Kernel(T.ceildiv(n, 64), 2, threads=32) as (bx, by):
            for i in T.Parallel(64):
                x[bx * 64 + i] = value
            for i in T.serial(T.min(n - bx * 64, 64)):
                y[bx * 64 + i, by] = T.cast(bx * 64 + i, T.float32)

    return main
'''


def test_int64_grid_and_loop_extents_run(tmp_path):
    path = tmp_path / "int64_kernels.py"
    path.write_text(textwrap.dedent(KERNELS))
    kernel = runpy.run_path(str(path), run_name="int64_kernels")["fill"](1.5)
    x, y = torch.zeros(200, dtype=torch.bfloat16), torch.zeros(200, 2)
    kernel(x, y)
    assert x.eq(1.5).all()
    assert torch.equal(y, torch.arange(200, dtype=torch.float32)[:, None].expand(200, 2))
