"""The check's shared-memory estimate covers what the CUDA code generator plans (the reductions' workspace
included), row reductions of a tile split over warps along N take a small per-warp workspace (MLA decode's
plan fits sm_90a as TileLang's does), and a plan over the target's limit is refused at the T.Kernel line."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import CompileError, check_source, lower
from tilelang_core.analysis.index import index_kernel
from tilelang_core.analysis.resources import budget

# MLA decode's shape of work: a 64-row tile split over 8 warps along N (FullCol), its row max and sum
SPLIT_ROWS = textwrap.dedent('''
    import tilelang.language as T

    @T.prim_func
    def rows(A: T.Tensor((64, {k}), "float16"), B: T.Tensor(({n}, {k}), "float16"), M: T.Tensor((64,), "float32"),
             S: T.Tensor((64,), "float32")):
        with T.Kernel(1, threads=256) as bx:
            A_s = T.alloc_shared((64, {k}), "float16")
            B_s = T.alloc_shared(({n}, {k}), "float16")
            acc = T.alloc_fragment((64, {n}), "float32")
            m = T.alloc_fragment((64,), "float32")
            s = T.alloc_fragment((64,), "float32")
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.clear(acc)
            T.gemm(A_s, B_s, acc, transpose_B=True, policy=T.GemmWarpPolicy.FullCol)
            T.reduce_max(acc, m, dim=1)
            for i, j in T.Parallel(64, {n}):
                acc[i, j] = T.exp2(acc[i, j] - m[i])
            T.reduce_sum(acc, s, dim=1)
            T.copy(m, M)
            T.copy(s, S)
''')

# a fragment reduced through the generic path (staged whole in shared memory) beside a large shared tile
GENERIC = textwrap.dedent('''
    import tilelang.language as T

    @T.prim_func
    def staged(A: T.Tensor((128, {w}), "float32"), O: T.Tensor((128,), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((128, {w}), "float32")
            x = T.alloc_fragment((128, 32), "float32")
            r = T.alloc_fragment((128,), "float32")
            T.copy(A, A_s)
            T.copy(A_s[0:128, 0:32], x)
            T.reduce_sum(x, r, dim=1)
            T.copy(r, O)
''')

# T.print gathers a fragment into a shared scratch the checks do not estimate
PRINTED = textwrap.dedent('''
    import tilelang.language as T

    @T.prim_func
    def printed(A: T.Tensor((128, 448), "float32"), O: T.Tensor((128, 448), "float32")):
        with T.Kernel(1, threads=128) as bx:
            A_s = T.alloc_shared((128, 448), "float32")
            x = T.alloc_fragment((128, 64), "float32")
            T.copy(A, A_s)
            T.copy(A_s[0:128, 0:64], x)
            T.print(x)
            T.copy(A_s, O)
''')


def _kernel(src: str, name: str):
    result = check_source(src, f"{name}.py")
    return result, result.kernels[0]


def _estimate(func) -> int:
    ix = index_kernel(func)
    return budget(ix.launches[0], ix).smem_total()


def test_the_check_counts_a_split_row_reduction_as_warps_times_rows_floats():
    result, func = _kernel(SPLIT_ROWS.format(k=64, n=64), "rows")
    assert not result.errors
    tiles = 64 * 64 * 2 * 2
    assert _estimate(func) == tiles + 8 * 64 * 4  # one per-warp workspace serves both reductions


def test_the_check_counts_the_staged_copy_of_a_reduced_fragment():
    result, func = _kernel(GENERIC.format(w=32), "staged")
    assert not result.errors
    assert _estimate(func) == 128 * 32 * 4 + 128 * 32 * 4 + 128 * 4
    # 128 x 440 floats (220 KiB) fit sm_90a alone; with the 16.5 KiB the reduction stages they do not
    over, _ = _kernel(GENERIC.format(w=440), "staged")
    errors = [d for d in over.errors if d.code == "shared-memory-exceeded"]
    assert errors and "reductions' workspace 16.5 KiB" in errors[0].message


@pytest.mark.tvm
def test_split_rows_are_held_per_warp_and_the_plan_matches_the_check():
    _, func = _kernel(SPLIT_ROWS.format(k=64, n=64), "rows")
    out = lower(func, "sm_90a")
    assert "mma-rows of 64 rows, warps 1x8" in out.stages["layouts"]
    assert out.smem_bytes == _estimate(func)
    assert [name for name, _, _ in out.smem_breakdown if name.startswith("red_")] == ["red_warps"]
    assert "quad_max" in out.source and "quad_sum" in out.source


@pytest.mark.tvm
@pytest.mark.nvcc
def test_split_row_reductions_compile_without_spills():
    from tests.codegen.ptxas import ptxas_report

    _, func = _kernel(SPLIT_ROWS.format(k=64, n=64), "rows")
    report = ptxas_report(lower(func, "sm_90a").source)
    assert "0 bytes spill stores" in report


@pytest.mark.tvm
def test_a_plan_over_the_limit_is_refused_at_the_kernel_line():
    result, func = _kernel(PRINTED, "printed")
    assert not result.errors  # 224 KiB of tiles: the check sees no problem
    with pytest.raises(CompileError) as info:
        lower(func, "sm_90a")
    (diag,) = info.value.diagnostics
    assert diag.code == "shared-memory-exceeded"
    assert diag.span.line == PRINTED.splitlines().index(
        "    with T.Kernel(1, threads=128) as bx:") + 1
    assert "232448 B" in diag.message and "x_print" in diag.message


# rows along the last dim that spread over whole registers of every thread (rms_norm's row of 8192)
ROWS_IN_REGISTERS = textwrap.dedent('''
    import tilelang.language as T

    @T.prim_func
    def norms(A: T.Tensor((64, 1024), "float32"), O: T.Tensor((64,), "float32")):
        with T.Kernel(32, threads=128) as bx:
            x = T.alloc_fragment((2, 1024), "float32")
            r = T.alloc_fragment((2,), "float32")
            T.copy(A[bx * 2, 0], x)
            T.reduce_{op}(x, r, dim=1)
            T.copy(r, O[bx * 2])
''')


@pytest.mark.tvm
@pytest.mark.parametrize("op", ["sum", "absmax"])
def test_rows_in_registers_reduce_through_warp_shuffles_and_a_rows_x_warps_workspace(op):
    result, func = _kernel(ROWS_IN_REGISTERS.format(op=op), "norms")
    assert not result.errors
    out = lower(func, "sm_90a")
    assert out.smem_bytes == _estimate(func) == 2 * 4 * 4  # 2 rows x 4 warps floats, not the 8 KiB tile
    assert "tl::lanes_allreduce" in out.source and "for (int q = 0; q < 8; ++q)" in out.source
    assert ("fabsf" in out.source) == (op == "absmax")


@pytest.mark.tvm
@pytest.mark.nvcc
def test_rows_in_registers_compile_without_spills():
    from tests.codegen.ptxas import ptxas_report

    _, func = _kernel(ROWS_IN_REGISTERS.format(op="max"), "norms")
    assert "0 bytes spill stores" in ptxas_report(lower(func, "sm_90a").source)
