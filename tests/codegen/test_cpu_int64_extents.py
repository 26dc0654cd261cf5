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


WIDE = '''
import tilelang.language as T

@T.prim_func
def main(x: T.Tensor[4294967296, T.bfloat16], y: T.Tensor[4294967296, T.bfloat16]):
    with T.Kernel(T.ceildiv(4294967296, 512), threads=128) as bx:
        s = T.alloc_shared((512,), T.bfloat16)
        T.copy(x[bx * 512], s)
        for i in T.Parallel(512):
            y[bx * 512 + i] = s[i] * 2
'''


def test_a_static_shape_past_int32_is_indexed_in_64_bits():
    """TileLang takes a tensor dimension past int32 (an int64 shape entry); the CPU backend then computes that
    tensor's indices in int64 from the leaves up, in element accesses and tile-op regions, so `bx * 512 + i` cannot
    wrap in int32 before it is widened (it was refused as over int32)."""
    from tilelang_core import check_source
    from tilelang_core.codegen.cpu.build import to_tir

    res = check_source(WIDE, "<wide>")
    assert not res.errors, [d.message for d in res.errors]
    text = str(to_tir(res.kernels[0]))
    assert text.count('T.Cast("int64", bx) * T.int64(512)') == 2, text  # the copy's region and the store
    assert 's[i0] = x[T.Cast("int64", bx)' in text, text  # the shared tile keeps int32 indices


def test_a_shape_past_int64_is_refused_at_the_annotation():
    from tilelang_core import check_source

    res = check_source(WIDE.replace("4294967296, T.bfloat16], y", "2**64, T.bfloat16], y"), "<wide>")
    assert any(d.code == "invalid-value" and "over int64" in d.message and d.span.line == 5 for d in res.errors), \
        [d.message for d in res.diagnostics]
