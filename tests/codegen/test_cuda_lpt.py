"""Longest blocks first (codegen/cuda/lpt.py): a block index whose loop runs longer as it grows is launched in
reverse (causal attention), and every kernel whose order is chosen otherwise or whose work does not grow keeps it."""
from __future__ import annotations

import pytest

from tilelang_core import check_source, lower
from tilelang_core.codegen.cuda import generate
from tests.conftest import ROOT

pytestmark = pytest.mark.tvm

ATTN = ROOT / "examples" / "flash_attention.py"
SMALL = dict(batch=1, heads=2, seq_len=256, dim=64, block_M=64, block_N=64, num_stages=2, threads=128)
HEAD = "import tilelang\nimport tilelang.language as T\n\n\n"
ROWS = HEAD + """@tilelang.jit
def rows(N=512, block=64):
    @T.prim_func
    def main(A: T.Tensor((N, N), T.float32), S: T.Tensor((N,), T.float32)):
        with T.Kernel(N // block, threads=128) as (bx,):
            acc = T.alloc_fragment((block,), T.float32)
            {swizzle}T.clear(acc)
            for k in T.serial({trips}):
                for i in T.Parallel(block):
                    acc[i] += A[bx * block + i, k]
            T.copy(acc, S[bx * block])

    return main
"""


def _attention(causal: bool):
    res = check_source(ATTN.read_text(), str(ATTN), instances={"flash_attention": [dict(SMALL, is_causal=causal)]})
    return next(k for k in res.kernels if k.factory == "flash_attention")


def _rows(trips: str, swizzle: str = ""):
    src = ROWS.format(trips=trips, swizzle=swizzle)
    res = check_source(src, "rows.py", instances={"rows": [{}]})
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_causal_attention_launches_its_longest_query_blocks_first(arch):
    func = _attention(True)
    assert "# longest blocks first: bx runs from 3 down" in lower(func, arch, until="layouts").stages["layouts"]
    assert "bx_lpt = 3 - bx" in lower(func, arch, until="lowered").stages["lowered"]
    src = generate(func, arch).source  # TVM folds the reversed index into each use
    assert "(3 - ((int)blockIdx.x))" in src if arch == "sm_90a" else "- (((int)blockIdx.x) * 4096)" in src


def test_work_that_does_not_grow_with_the_block_keeps_the_launch_order():
    for func in (_attention(False), _rows("N"), _rows("N - bx * block")):
        assert "longest blocks first" not in lower(func, "sm_90a", until="layouts").stages["layouts"]
        assert "_lpt" not in lower(func, "sm_90a", until="lowered").stages["lowered"]


def test_a_growing_loop_reverses_its_block_unless_atomics_a_swizzle_or_the_switch_say_otherwise(monkeypatch):
    grows = _rows("(bx + 1) * block")
    assert "bx_lpt = 7 - bx" in lower(grows, "sm_90a", until="lowered").stages["lowered"]
    swizzled = _rows("(bx + 1) * block", swizzle="T.use_swizzle(4)\n            ")
    assert "_lpt" not in lower(swizzled, "sm_90a", until="lowered").stages["lowered"]
    src = ROWS.format(trips="(bx + 1) * block", swizzle="").replace(  # blocks that share state
        "T.copy(acc, S[bx * block])", "for i in T.Parallel(block):\n                T.atomic_add(S[i], acc[i])")
    summed = check_source(src, "rows.py", instances={"rows": [{}]}).kernels[0]
    assert "_lpt" not in lower(summed, "sm_90a", until="lowered").stages["lowered"]
    monkeypatch.setenv("TILELSP_HEAVY_FIRST", "0")
    assert "_lpt" not in lower(grows, "sm_90a", until="lowered").stages["lowered"]
