"""A copy of part of a fragment (`acc[:4, :]`, `acc[4:8, 32:]`) writes only that part, re-based to its origin.

flash_decoding/example_gqa_decode copies `acc_o[:valid_block_H, :]` (4 of 64 rows) into a 4-row shared tile; the
CUDA lowering wrote all 64 rows past the end of shared memory (compute-sanitizer on the H200: launch failed)."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source, lower

SRC = textwrap.dedent('''
    import tilelang.language as T

    @T.prim_func
    def part(A: T.Tensor((64, 64), "float16"), B: T.Tensor((64, 64), "float16"), O: T.Tensor((4, 32), "float16")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared([64, 64], "float16")
            B_s = T.alloc_shared([64, 64], "float16")
            O_s = T.alloc_shared([4, 32], "float16")
            acc = T.alloc_fragment([64, 64], "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.clear(acc)
            T.gemm(A_s, B_s, acc, policy=T.GemmWarpPolicy.FullRow)
            T.copy(acc[{rows}, {cols}], O_s)
            T.copy(O_s, O)
''')

SLICES = [("0:4", "0:32", 0, 0), ("4:8", "32:64", 4, 32)]


def _kernel(rows: str, cols: str):
    result = check_source(SRC.format(rows=rows, cols=cols), "part.py")
    assert not [d for d in result.diagnostics if d.severity.name == "ERROR"], result.diagnostics
    return result.kernels[0]


@pytest.mark.tvm
@pytest.mark.nvcc
@pytest.mark.parametrize("rows, cols, r0, c0", SLICES)
def test_a_fragment_slice_is_guarded_and_compiles(rows, cols, r0, c0):
    from tilelang_core.runtime.artifact import compile_cubin

    out = lower(_kernel(rows, cols), "sm_90a")
    line = next(k for k, text in enumerate(SRC.splitlines(), 1) if "T.copy(acc[" in text)
    lowered = out.stages["lowered"]
    body = lowered[lowered.index(f"tl_line_{line}\""):lowered.index(f"tl_line_{line + 1}\"")]
    assert f"< {r0 + 4}" in body and "if " in body  # rows outside the slice are skipped
    assert compile_cubin(out.source, "sm_90a")


@pytest.mark.tvm
@pytest.mark.parametrize("rows, cols, r0, c0", SLICES)
def test_a_fragment_slice_copies_that_part_on_the_cpu_backend(rows, cols, r0, c0):
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a, b = torch.randn(64, 64).half(), torch.randn(64, 64).half()
    o = torch.zeros(4, 32).half()
    cpu.build(_kernel(rows, cols))(a, b, o)
    want = (a.float() @ b.float())[r0:r0 + 4, c0:c0 + 32]
    torch.testing.assert_close(o.float(), want, rtol=2e-2, atol=2e-2)
