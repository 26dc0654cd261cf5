"""The CPU backend's instrumented mode: each class of silent bug is found at the user's line with the first block
(and thread), and correct kernels (partial tiles, guards, atomics, lazy selects, running-max init) get nothing."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

SRC = '''
import tilelang.language as T

def kernels(M=100, N=64, K=64, bm=64, bn=64, bk=32):
    @T.prim_func
    def uninit_gemm(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"),
                    C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float32")
            B_s = T.alloc_shared((bk, bn), "float32")
            acc = T.alloc_fragment((bm, bn), "float32")
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(A[by * bm, k * bk], A_s)
                T.copy(B[k * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, acc)
            T.copy(acc, C[by * bm, bx * bn])

    @T.prim_func
    def tail_dropped(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(M // 32, threads=128) as bx:
            T.copy(A[bx * 32:bx * 32 + 32, 0:N], C[bx * 32:bx * 32 + 32, 0:N])

    @T.prim_func
    def same_tile(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(2, threads=128) as bx:
            acc = T.alloc_fragment((32, N), "float32")
            T.copy(A[bx * 32, 0], acc)
            for i, j in T.Parallel(32, N):
                C[i, j] = acc[i, j]

    @T.prim_func
    def unguarded(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            S = T.alloc_shared((bm, N), "float32")
            D = T.alloc_fragment((bm, N), "float32")
            T.copy(A[bx * bm, 0], S)
            for i, j in T.Parallel(bm, N):
                D[i, j] = S[i + 1, j]
            for i, j in T.Parallel(bm, N):
                C[bx * bm + i, j] = A[bx * bm + i, j] * 2.0 + D[i, j]

    @T.prim_func
    def careful(A: T.Tensor((M, N), "float32"), C: T.Tensor((M, N), "float32"), S: T.Tensor((N,), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            m = T.alloc_fragment((bm,), "float32")
            t = T.alloc_fragment((bm, N), "float32")
            T.fill(m, -T.infinity("float32"))
            T.copy(A[bx * bm, 0], t)
            for k in T.serial(2):
                for i in T.Parallel(bm):
                    m[i] = T.max(m[i], t[i, k])
            for i, j in T.Parallel(bm, N):
                if bx * bm + i < M:
                    C[bx * bm + i, j] = T.if_then_else(bx * bm + i < M, A[bx * bm + i, j], 0.0) + m[i]
            for i, j in T.Parallel(bm, N):
                T.atomic_add(S[j], t[i, j])

    @T.prim_func
    def thread_local(A: T.Tensor((M,), "float32"), B: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, 32), threads=32) as bx:
            tx = T.get_thread_binding()
            r = T.alloc_local((1,), "float32")
            if tx > 0 and bx * 32 + tx < M:
                r[0] = A[bx * 32 + tx]
            if bx * 32 + tx < M:
                B[bx * 32 + tx] = r[0]

    return uninit_gemm, tail_dropped, same_tile, unguarded, careful, thread_local
'''
_FUNCS: dict = {}


def _func(name: str):
    from tilelang_core.check import check_source

    if not _FUNCS:
        res = check_source(SRC, "kernels.py")
        _FUNCS.update({k.name: k for k in res.kernels})
    return _FUNCS[name]


def findings(name: str, out_idx=(), **shapes):
    """Run kernel `name` sanitized on random inputs (outputs poisoned); [(code, line, message)]."""
    from tilelang_core.ir import nodes as N
    from tilelang_core.verify.sanitize import poison, sanitize_run

    func = _func(name)
    args = []
    for k, p in enumerate(func.params):
        t = torch.randn(*shapes[p.name]) if p.name in shapes else None
        if k in out_idx:
            poison(t)
        elif isinstance(p, N.Buffer) and p.name in ("S",):
            t.zero_()
        args.append(t)
    return [(d.code, d.span.line, d.message) for d in sanitize_run(func, tuple(out_idx), args)]


def line_of(text: str) -> int:
    return next(k for k, ln in enumerate(SRC.splitlines(), 1) if text in ln)


def test_gemm_into_an_accumulator_nothing_cleared():
    got = findings("uninit_gemm", (2,), A=(100, 64), B=(64, 64), C=(100, 64))
    assert [(c, ln) for c, ln, _ in got] == [("sanitize-uninitialized-read", line_of("T.gemm(A_s, B_s, acc)"))]
    assert "T.gemm here reads acc[0, 0] (a fragment) before anything wrote it" in got[0][2] and "block (bx=0, by=0)" in got[0][2]


def test_grid_sized_with_floor_division_leaves_rows_unwritten():
    got = findings("tail_dropped", (1,), A=(100, 64), C=(100, 64))
    assert [c for c, _, _ in got] == ["sanitize-unwritten-output"]
    assert "rows 96..99 of 100" in got[0][2] and "256 of 6400 elements of output 'C'" in got[0][2]


def test_two_blocks_writing_one_tile_race():
    got = findings("same_tile", (), A=(100, 64), C=(100, 64))
    assert got[0][:2] == ("sanitize-block-race", line_of("C[i, j] = acc[i, j]"))
    assert "block (bx=0) and block (bx=1) both write C[0, 0]" in got[0][2]


def test_shared_halo_read_is_out_of_bounds_and_global_tails_are_not():
    got = findings("unguarded", (), A=(100, 64), C=(100, 64))
    assert [(c, ln) for c, ln, _ in got] == [("sanitize-out-of-bounds", line_of("D[i, j] = S[i + 1, j]"))]
    assert "S[64, 0] is outside S of shape (64, 64) (shared memory, first in block (bx=0))" in got[0][2]


def test_guards_selects_running_max_and_atomics_are_clean():
    assert findings("careful", (), A=(100, 64), C=(100, 64), S=(64,)) == []


def test_thread_level_read_of_a_local_nothing_wrote_names_the_thread():
    got = findings("thread_local", (), A=(100,), B=(100,))
    assert [(c, ln) for c, ln, _ in got] == [("sanitize-uninitialized-read", line_of("B[bx * 32 + tx] = r[0]"))]
    assert "first in block (bx=0), thread 0" in got[0][2]


def test_sanitized_outputs_match_the_plain_build():
    from tilelang_core.codegen import cpu
    from tilelang_core.codegen.cpu.sanitize import build_sanitized

    func = _func("careful")
    a = torch.randn(100, 64)
    plain_c, plain_s, san_c, san_s = torch.zeros(100, 64), torch.zeros(64), torch.zeros(100, 64), torch.zeros(64)
    cpu.build(func)(a, plain_c, plain_s)
    hits, _ = build_sanitized(func).run([a, san_c, san_s])
    assert hits == [] and torch.equal(plain_c, san_c) and torch.allclose(plain_s, san_s)
