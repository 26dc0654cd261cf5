"""CUDA lowering of T.cumsum, reducers (T.alloc_reducer + T.finalize_reducer), T.atomic_addx2/x4 and T.ieee_*:
the source nvcc builds for sm_80 and sm_90a, and the constructs reported at the user's line."""
from __future__ import annotations

import textwrap

import pytest
from thread_kernels import REDUCERS, SCANS, kernel_of

from tilelang_core import check_source

pytestmark = [pytest.mark.tvm]

FRAGMENT_SCAN = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((128, 64), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        F = T.alloc_fragment((128, 64), T.float32)
        T.copy(A, F)
        T.cumsum(F, dim=1)
        T.copy(F, A)
"""

WHOLE_REDUCER = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((128,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        red = T.alloc_reducer((1,), T.float32, replication="all")
        T.clear(red)
        for i in T.serial(128):
            red[0] += A[i]
        T.finalize_reducer(red)
        A[0] = red[0]
"""


@pytest.mark.nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_reducers_ieee_and_vector_atomics_compile(arch):
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(kernel_of(REDUCERS), arch)
    for text in ("__fadd_rz(", "__fmaf_rn(", "__fdiv_ru(", "tl::atomic_addx4(", "tl::atomic_addx2(",
                 "tl::lanes_allreduce(", "tl::combine("):
        assert text in ck.source, text
    assert compile_cubin(ck.source, arch)[:4] == b"\x7fELF"


@pytest.mark.nvcc
def test_cumsum_on_shared_tiles_and_replicated_fragments_compiles():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(kernel_of(SCANS), "sm_90a")
    assert "(3 - k" in ck.tvmscript  # the reversed scan walks the column from the end
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


@pytest.mark.nvcc
def test_cumsum_of_a_distributed_fragment_is_staged_through_shared_memory_and_compiles():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(kernel_of(FRAGMENT_SCAN), "sm_90a")
    assert "F_shared" in ck.tvmscript
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


@pytest.mark.parametrize("src, line, words", [
    (WHOLE_REDUCER, 10, "reducer 'red' is updated outside a T.Parallel loop"),
], ids=["reducer-updated-by-every-thread"])
def test_unsupported_forms_are_reported_at_their_line(src, line, words):
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.codegen.cuda.common import LoweringError

    with pytest.raises(LoweringError) as info:
        generate(kernel_of(src), "sm_90a")
    assert words in str(info.value) and info.value.span.line == line


def test_ieee_rounding_mode_is_checked_by_the_frontend():
    src = textwrap.dedent("""
        import tilelang.language as T

        @T.prim_func
        def k(A: T.Tensor((128,), T.float32)):
            with T.Kernel(1, threads=128) as bx:
                for i in T.Parallel(128):
                    A[i] = T.ieee_add(A[i], 1.0, "rx")
    """)
    res = check_source(src, "<test>")
    assert [(d.code, d.span.line) for d in res.errors] == [("bad-arguments", 8)]
    assert "'rn', 'rz', 'ru' or 'rd'" in res.errors[0].message


@pytest.mark.nvcc
def test_print_compiles_with_escaped_messages():
    from thread_kernels import PRINTS

    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    src = generate(kernel_of(PRINTS), "sm_90a").source
    assert 'tl::print_msg("hello \\"there\\"")' in src and 'tl::print_var("block"' in src
    assert 'tl::print_elem("frag", "F"' in src and "threadIdx.x) == 32" in src  # warp_id=1 prints
    assert compile_cubin(src, "sm_90a")[:4] == b"\x7fELF"


@pytest.mark.nvcc
def test_scalar_atomics_under_a_thread_if_compile():
    from thread_kernels import HISTOGRAM

    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(kernel_of(HISTOGRAM), "sm_90a")
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


@pytest.mark.nvcc
def test_transpose_is_a_parallel_loop_and_compiles():
    from thread_kernels import TRANSPOSE

    from tilelang_core.codegen.cuda import generate
    from tilelang_core.ir.visitor import walk
    from tilelang_core.ir import nodes as N
    from tilelang_core.runtime.artifact import compile_cubin

    kernel = kernel_of(TRANSPOSE)
    loops = [n for n in walk(kernel.body) if isinstance(n, N.For) and n.kind == "parallel"]
    assert [len(loop.vars) for loop in loops] == [2, 3]
    assert compile_cubin(generate(kernel, "sm_90a").source, "sm_90a")[:4] == b"\x7fELF"


def test_transpose_shapes_are_checked_by_the_frontend():
    src = textwrap.dedent("""
        import tilelang.language as T

        @T.prim_func
        def k(A: T.Tensor((32, 64), T.float32)):
            with T.Kernel(1, threads=128) as bx:
                S = T.alloc_shared((32, 64), T.float32)
                D = T.alloc_shared((32, 64), T.float32)
                T.transpose(S, D)
    """)
    res = check_source(src, "<test>")
    assert [(d.code, d.span.line) for d in res.errors] == [("bad-arguments", 9)]


@pytest.mark.nvcc
def test_atomic_add_returning_the_previous_value_compiles():
    from thread_kernels import COMPACT

    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    src = generate(kernel_of(COMPACT), "sm_90a").source
    assert "= tl::atomic_add((&(((int*)smem_ptr)[0])), 1);" in src
    assert compile_cubin(src, "sm_90a")[:4] == b"\x7fELF"


def test_shared_fill_has_no_block_barrier_inside_its_divergent_loop():
    from thread_kernels import COMPACT

    from tilelang_core.codegen.cuda import generate

    script = generate(kernel_of(COMPACT), "sm_90a").tvmscript
    fill = script[script.index('"tl_line_10"'):script.index('"tl_line_11"')]
    assert "if (it * 256 + tx) < (1):" in fill and "tvm_storage_sync" not in fill  # T.fill(n, 0): thread 0 only
