"""`with T.Kernel(threads=n):` without grid dimensions launches one block (as in TileLang; it was invalid-kernel):
it runs on the CPU backend and lowers for sm_90a; four grid dimensions stay an error."""
from __future__ import annotations

import pytest

from tilelang_core import check_source

pytestmark = pytest.mark.tvm

SRC = '''
import tilelang_core.language as T


@T.prim_func
def program(A: T.Tensor((128,), "float32")):
    with T.Kernel(threads=128):
        tid = T.get_thread_binding()
        A[tid] = T.cast(tid, "float32") * 2
'''


@pytest.fixture
def program(tmp_path):
    import runpy

    path = tmp_path / "no_grid.py"
    path.write_text(SRC)
    return runpy.run_path(str(path))["program"]


def test_kernel_without_grid_runs_one_block(program):
    torch = pytest.importorskip("torch")
    import tilelang_core as tilelang

    a = torch.zeros(128)
    tilelang.compile(program, target="cpu")(a)
    assert torch.equal(a, torch.arange(128, dtype=torch.float32) * 2)


@pytest.mark.nvcc
def test_kernel_without_grid_builds_for_sm90a(program):
    import tilelang_core as tilelang

    src = tilelang.compile(program, target="sm_90a").get_kernel_source()  # nvcc compiles it
    assert "A_ptr[((int)threadIdx.x)]" in src and "blockIdx" not in src.split("main_kernel(")[-1]


def test_four_grid_dimensions_are_still_invalid():
    src = SRC.replace("T.Kernel(threads=128)", "T.Kernel(1, 1, 1, 1, threads=128)")
    codes = [d.code for d in check_source(src, "four.py").diagnostics if d.is_error]
    assert codes == ["invalid-kernel"]
