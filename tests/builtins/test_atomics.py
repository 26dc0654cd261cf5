"""T.atomic_max/min/or (one element, return_prev, a region), T.atomic_load/store and T.atomic_addx2/x4 over buffers
and slices: CPU numerics against torch and CUDA for sm_90a that nvcc compiles."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source

SRC = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((8,), T.int32), B: T.Tensor((3,), T.int32), P: T.Tensor((8,), T.int32),
      F: T.Tensor((4, 4), T.float32), G: T.Tensor((4, 4), T.float32), V: T.Tensor((4,), T.float32),
      W: T.Tensor((4,), T.float32)):
    with T.Kernel(1, threads=32):
        if T.get_thread_binding() == 0:
            for i in T.serial(8):
                P[i] = T.atomic_max(B[0], A[i], return_prev=True)
                T.atomic_or(B[1], A[i])
            x = T.atomic_load(B[0], memory_order="acquire")
            T.atomic_store(B[2], x + 1, memory_order="release")
            T.atomic_addx4(W[0:4], V[0:4])
        T.atomic_min(G, F)
"""


def _kernel(src: str):
    res = check_source(textwrap.dedent(src), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


@pytest.mark.tvm
def test_atomics_on_the_cpu():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a = torch.tensor([3, 1, 4, 1, 5, 9, 2, 6], dtype=torch.int32)
    b, p = torch.tensor([0, 0, 0], dtype=torch.int32), torch.zeros(8, dtype=torch.int32)
    f, g = torch.randn(4, 4), torch.randn(4, 4)
    v, w = torch.randn(4), torch.randn(4)
    g0, w0 = g.clone(), w.clone()
    cpu.build(_kernel(SRC))(a, b, p, f, g, v, w)
    assert p.tolist() == [0, 3, 3, 4, 4, 5, 9, 9]
    assert b.tolist() == [9, 3 | 1 | 4 | 5 | 9 | 2 | 6, 10]
    torch.testing.assert_close(g, torch.minimum(f, g0))
    torch.testing.assert_close(w, w0 + v)


@pytest.mark.tvm
@pytest.mark.nvcc
def test_atomics_compile_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(_kernel(SRC), "sm_90a")
    assert "tl::atomic_max(" in ck.source and "tl::atomic_or(" in ck.source
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


def test_a_memory_order_that_does_not_exist_is_refused():
    errs = check_source(textwrap.dedent(SRC).replace('"acquire"', '"sometimes"'), "<test>").errors
    assert errs and "does not support memory_order" in errs[0].message and errs[0].span.line == 13


VECTOR = """
import tilelang.language as T

@T.prim_func
def k(D: T.Tensor((2, 8), T.{dt}), S: T.Tensor((2, 8), T.{dt})):
    with T.Kernel(1, threads=32):
        for i, j in T.Parallel(2, 2):
            T.atomic_addx4(D[i, j * 4], S[i, j * 4])
"""


@pytest.mark.tvm
@pytest.mark.parametrize("dt", ["float16", "bfloat16", "int32"])
def test_atomic_addx4_of_16_bit_floats_and_int32(dt):
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu
    from tilelang_core.codegen.cuda import generate

    tdt = getattr(torch, dt)
    d, s = (torch.randint(-8, 8, (2, 8)).to(tdt) for _ in range(2))
    want = d + s
    func = _kernel(VECTOR.format(dt=dt))
    cpu.build(func)(d, s)
    assert torch.equal(d, want)
    assert "tl::atomic_addx4(" in generate(func, "sm_90a").source


@pytest.mark.tvm
@pytest.mark.nvcc
def test_atomic_addx4_of_half_and_int32_compile_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    for dt in ("float16", "int32"):
        assert compile_cubin(generate(_kernel(VECTOR.format(dt=dt)), "sm_90a").source, "sm_90a")[:4] == b"\x7fELF"


def test_a_load_cannot_release_and_a_store_cannot_acquire():
    for old, new in (('"acquire"', '"release"'), ('"release"', '"acquire"')):
        errs = check_source(textwrap.dedent(SRC).replace(old, new, 1), "<test>").errors
        assert errs and errs[0].code == "invalid-memory-order" and "does not support memory_order" in errs[0].message, \
            [e.message for e in errs]


FLOAT_PREV_AND_TILES = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((8,), T.{dt}), B: T.Tensor((2,), T.{dt}), P: T.Tensor((8,), T.{dt}), Q: T.Tensor((8,), T.{dt}),
      X: T.Tensor((4, 64), T.float32), Y: T.Tensor((4, 64), T.float32), Z: T.Tensor((8, 64), T.float32)):
    with T.Kernel(1, threads=128):
        S = T.alloc_shared((4, 64), T.float32)
        if T.get_thread_binding() == 0:
            for i in T.serial(8):
                P[i] = T.atomic_max(B[0], A[i], return_prev=True)
                Q[i] = T.atomic_min(B[1], A[i], return_prev=True)
        T.atomic_add(Y, X)
        T.copy(X, S)
        T.atomic_add(Z[2:6, :], S)
"""


@pytest.mark.tvm
@pytest.mark.parametrize("dt", ["float32", "float16"])
def test_float_atomics_return_the_previous_value_and_tiles_add_from_global_and_shared(dt):
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu
    from tilelang_core.codegen.cuda import generate

    tdt = getattr(torch, dt)
    a = torch.tensor([3, -1, 4, -1, 5, -9, 2, 6]).to(tdt)
    b, p, q = torch.zeros(2, dtype=tdt), torch.zeros(8, dtype=tdt), torch.zeros(8, dtype=tdt)
    x, y, z = torch.randn(4, 64), torch.randn(4, 64), torch.randn(8, 64)
    y0, z0 = y.clone(), z.clone()
    func = _kernel(FLOAT_PREV_AND_TILES.format(dt=dt))
    cpu.build(func)(a, b, p, q, x, y, z)
    assert p.tolist() == [0, 3, 3, 4, 4, 5, 5, 5] and q.tolist() == [0, 0, -1, -1, -1, -1, -9, -9]
    torch.testing.assert_close(y, y0 + x)
    z0[2:6] += x
    torch.testing.assert_close(z, z0)
    src = generate(func, "sm_90a").source
    assert "= tl::atomic_max(" in src and "= tl::atomic_min(" in src  # the previous value is read


@pytest.mark.tvm
@pytest.mark.nvcc
def test_float_atomics_returning_the_previous_value_compile_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    for dt in ("float32", "bfloat16"):
        src = generate(_kernel(FLOAT_PREV_AND_TILES.format(dt=dt)), "sm_90a").source
        assert compile_cubin(src, "sm_90a")[:4] == b"\x7fELF"


def test_a_tma_atomic_add_from_global_memory_is_refused_at_its_line():
    src = FLOAT_PREV_AND_TILES.format(dt="float32").replace("T.atomic_add(Y, X)", "T.atomic_add(Y, X, use_tma=True)")
    errs = check_source(textwrap.dedent(src), "<test>").errors
    assert errs and errs[0].code == "tma-atomic-unsupported" and "shared-memory tile" in errs[0].message
    assert errs[0].span.line == 13


LOCAL_TILE = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((2,), T.float32), W: T.Tensor((2,), T.float32)):
    with T.Kernel(1, threads=128):
        L = T.alloc_local((2,), T.float32)
        T.copy(A, L)
        T.atomic_add(W, L)
"""


@pytest.mark.tvm
def test_a_per_thread_tile_is_added_once():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu
    from tilelang_core.codegen.cuda import generate

    a, w = torch.tensor([1.5, -2.0]), torch.tensor([1.0, 1.0])
    func = _kernel(LOCAL_TILE)
    cpu.build(func)(a, w)
    assert w.tolist() == [2.5, -1.0]
    src = generate(func, "sm_90a").source
    assert "tl::atomic_add((&(W_ptr[" in src and "threadIdx.x) < 2" in src  # each element by one thread


HEAD_ADDRESS_MAX_MIN = """
import tilelang.language as T

@T.prim_func
def k(X: T.Tensor((4, 8), T.float32), Z: T.Tensor((8, 16), T.float32), W: T.Tensor((4, 8), T.float32)):
    with T.Kernel(1, threads=32):
        S = T.alloc_shared((4, 8), T.float32)
        T.copy(X, S)
        T.atomic_max(Z[2, 8], S)
        T.atomic_min(W[0, 0], S)
"""


@pytest.mark.tvm
def test_tile_max_and_min_at_a_head_address_cover_the_value_tile():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    x, z, w = torch.randn(4, 8), torch.randn(8, 16), torch.randn(4, 8)
    z0, w0 = z.clone(), w.clone()
    cpu.build(_kernel(HEAD_ADDRESS_MAX_MIN))(x, z, w)
    z0[2:6, 8:16] = torch.maximum(z0[2:6, 8:16], x)
    torch.testing.assert_close(z, z0)
    torch.testing.assert_close(w, torch.minimum(w0, x))


@pytest.mark.tvm
@pytest.mark.nvcc
def test_tile_max_and_min_at_a_head_address_compile_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    src = generate(_kernel(HEAD_ADDRESS_MAX_MIN), "sm_90a").source
    assert "tl::atomic_max(" in src and compile_cubin(src, "sm_90a")[:4] == b"\x7fELF"
