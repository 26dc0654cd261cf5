"""T.rng_init / T.rng_rand / T.rng_rand_float on the CPU backend (codegen/cpu/rng.py): each emulated thread draws the
Philox4x32-10 stream of codegen/philox.py, which our CUDA lowering draws too (tests/fuzzer_patterns/fuzz_rng.py has
the cases also run on the GPU)."""
from __future__ import annotations

import runpy
import textwrap

import pytest
from test_cpu_backend import build_src

from tilelang_core.codegen.philox import PhiloxStream

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

# the corpus example rand/rand_uint.py, built for the CPU
RAND_UINT = '''
import tilelang_core as tilelang
import tilelang_core.language as T


@tilelang.jit(target="cpu")
def tilelang_rand_1d(M=1024, seed=42):
    num_per_thread = 128
    threads = 1
    blk_M = num_per_thread * threads
    A = T.empty((M,), "uint32")
    with T.Kernel(T.ceildiv(M, threads * num_per_thread), threads=threads) as bx:
        tx = T.get_thread_binding()
        T.rng_init(seed, 0, bx * blk_M + tx * num_per_thread)
        for i, j in T.Parallel(threads, num_per_thread):
            offsets = (bx * threads + i) * num_per_thread
            idx = offsets + j
            if idx < M:
                A[idx] = T.rng_rand()
    return A
'''

HEADER = """
import tilelang
import tilelang.language as T
"""

# rng_init inside a run-time guard with a shared-memory cumsum between it and the draw (the real TileLang's test)
GUARDED = HEADER + """
@T.prim_func
def guarded(A: T.Tensor((64,), "uint32"), n: T.int32):
    with T.Kernel(64, threads=32) as bx:
        tx = T.get_thread_binding()
        s = T.alloc_shared((32,), "int32")
        if bx < n:
            T.rng_init(42, 0, bx)
            s[tx] = 1
            T.cumsum(s, dim=0)
            if tx == 0:
                A[bx] = T.rng_rand() + T.cast(s[31], "uint32") * 0
"""

FRAGMENT = HEADER + """
@T.prim_func
def noise(A: T.Tensor((128,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        T.rng_init(1)
        f = T.alloc_fragment((128,), "float32")
        for i in T.Parallel(128):
            f[i] = T.rng_rand_float()
        T.copy(f, A)
"""

CONDITIONAL = HEADER + """
@T.prim_func
def pick(A: T.Tensor((32,), "uint32")):
    with T.Kernel(1, threads=32) as bx:
        tx = T.get_thread_binding()
        T.rng_init(1)
        A[tx] = T.if_then_else(tx < 16, T.rng_rand(), T.uint32(0))
"""


def test_rand_uint_example_draws_the_reference_stream(tmp_path):
    path = tmp_path / "rand_uint.py"
    path.write_text(textwrap.dedent(RAND_UINT))
    factory = runpy.run_path(str(path), run_name="rand_uint")["tilelang_rand_1d"]
    for m, seed in ((1024, 42), (512, 123), (128, 0)):  # the example's own calls
        got = factory(m, seed).tolist()
        assert got == PhiloxStream(seed).take(m), (m, seed)


def test_rng_init_under_a_guard_with_a_cumsum_between():
    module = build_src(GUARDED)
    a = torch.full((64,), 0xDEADBEEF, dtype=torch.uint32)
    module(a, 37)
    assert a[:37].tolist() == [PhiloxStream(42, 0, bx).next() for bx in range(37)]
    assert (a[37:] == 0xDEADBEEF).all()


def test_draws_in_a_parallel_loop_over_a_fragment_are_refused_with_a_diagnostic():
    from tilelang_core.diagnostics import CompileError

    with pytest.raises(CompileError) as err:
        build_src(FRAGMENT)
    diag = err.value.diagnostics[0]
    assert diag.code == "lowering-unsupported" and "T.Parallel loop over a fragment" in diag.message
    assert diag.span.line == 10  # the T.Parallel loop


def test_a_draw_in_a_branch_of_if_then_else_is_refused_with_a_diagnostic():
    from tilelang_core.diagnostics import CompileError

    with pytest.raises(CompileError) as err:
        build_src(CONDITIONAL)
    diag = err.value.diagnostics[0]
    assert diag.code == "lowering-unsupported" and "T.if_then_else" in diag.message and diag.span.line == 10
