"""The sanitizer's reduction-step, in-place-hazard and int32-overflow checks on small kernels of each pattern: the
bug is found at its line with the first block, the fixed kernel (k * block_K, a reversed K loop, a separate
output, 64-bit arithmetic) gets nothing; sampled runs reach the last block and say what they skip."""
from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

SRC = '''
import tilelang.language as T

def kernels(M=64, N=64, K=128, bm=64, bn=64, bk=32):
    @T.prim_func
    def k_step(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float32")
            B_s = T.alloc_shared((bk, bn), "float32")
            acc = T.alloc_fragment((bm, bn), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, 64), num_stages=2):
                T.copy(A[by * bm, k * 64], A_s)
                T.copy(B[k * 64, bx * bn], B_s)
                T.gemm(A_s, B_s, acc)
            T.copy(acc, C[by * bm, bx * bn])

    @T.prim_func
    def k_overlap(A: T.Tensor((M, K), "float32"), C: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            A_s = T.alloc_shared((bm, bk), "float32")
            s = T.alloc_fragment((bm,), "float32")
            T.clear(s)
            for k in T.serial(K // 16):
                T.copy(A[bx * bm, k * 16], A_s)
                T.reduce_sum(A_s, s, dim=1, clear=False)
            T.copy(s, C[bx * bm])

    @T.prim_func
    def k_fixed(A: T.Tensor((M, K), "float32"), B: T.Tensor((K, N), "float32"), C: T.Tensor((M, N), "float32"),
                S: T.Tensor((M, K // 32), "float32")):
        with T.Kernel(T.ceildiv(N, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            A_s = T.alloc_shared((bm, bk), "float32")
            B_s = T.alloc_shared((bk, bn), "float32")
            S_s = T.alloc_shared((bm, 1), "float32")
            acc = T.alloc_fragment((bm, bn), "float32")
            T.clear(acc)
            nk = T.ceildiv(K, bk)
            for k in T.Pipelined(nk, num_stages=2):
                ko = nk - 1 - k
                T.copy(A[by * bm, ko * bk], A_s)
                T.copy(S[by * bm:by * bm + bm, k * bk // 64:k * bk // 64 + 1], S_s)
                for i, j in T.Parallel(bm, bk):
                    A_s[i, j] = A_s[i, j] * S_s[i, 0]
                T.copy(B[ko * bk, bx * bn], B_s)
                T.gemm(A_s, B_s, acc)
            T.copy(acc, C[by * bm, bx * bn])

    @T.prim_func
    def k_sparse(A: T.Tensor((M, K), "float32"), C: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            A_s = T.alloc_shared((bm, bk), "float32")
            s = T.alloc_fragment((bm,), "float32")
            T.clear(s)
            for k in T.serial(K // bk):
                if k % 2 == 0:
                    T.copy(A[bx * bm, k * bk], A_s)
                    T.reduce_sum(A_s, s, dim=1, clear=False)
            T.copy(s, C[bx * bm])

    @T.prim_func
    def k_varlen(A: T.Tensor((M, K), "float32"), B: T.Tensor((M, K), "float32"), Starts: T.Tensor((2,), "int32"),
                 Idx: T.Tensor((4,), "int32"), C: T.Tensor((M,), "float32")):
        with T.Kernel(T.ceildiv(M, bm), threads=128) as bx:
            A_s = T.alloc_shared((bm, bk), "float32")
            B_s = T.alloc_shared((bm, bk), "float32")
            s = T.alloc_fragment((bm,), "float32")
            T.clear(s)
            base = Starts[bx]
            for k in T.serial(2):
                T.copy(A[bx * bm, base + k * 64], A_s)
                T.copy(B[bx * bm, Idx[k] * bk], B_s)
                T.reduce_sum(A_s, s, dim=1, clear=False)
                T.reduce_sum(B_s, s, dim=1, clear=False)
            T.copy(s, C[bx * bm])

    @T.prim_func
    def inplace(X: T.Tensor((M, K), "float32"), W: T.Tensor((K, K), "float32")):
        with T.Kernel(T.ceildiv(K, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            X_s = T.alloc_shared((bm, bk), "float32")
            W_s = T.alloc_shared((bk, bn), "float32")
            acc = T.alloc_fragment((bm, bn), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(X[by * bm, k * bk], X_s)
                T.copy(W[k * bk, bx * bn], W_s)
                T.gemm(X_s, W_s, acc)
            T.copy(acc, X[by * bm, bx * bn])

    @T.prim_func
    def shift_left(X: T.Tensor((K,), "float32")):
        with T.Kernel(T.ceildiv(K, 32), threads=32) as bx:
            for i in T.Parallel(32):
                if bx * 32 + i + 1 < K:
                    X[bx * 32 + i] = X[bx * 32 + i + 1]

    @T.prim_func
    def separate(X: T.Tensor((M, K), "float32"), W: T.Tensor((K, K), "float32"), Y: T.Tensor((M, K), "float32")):
        with T.Kernel(T.ceildiv(K, bn), T.ceildiv(M, bm), threads=128) as (bx, by):
            X_s = T.alloc_shared((bm, bk), "float32")
            W_s = T.alloc_shared((bk, bn), "float32")
            acc = T.alloc_fragment((bm, bn), "float32")
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, bk), num_stages=2):
                T.copy(X[by * bm, k * bk], X_s)
                T.copy(W[k * bk, bx * bn], W_s)
                T.gemm(X_s, W_s, acc)
            for i, j in T.Parallel(bm, bn):
                Y[by * bm + i, bx * bn + j] = acc[i, j] + Y[by * bm + i, bx * bn + j]

    @T.prim_func
    def wraps(C: T.Tensor((1024,), "float32")):
        with T.Kernel(1024, threads=32) as bx:
            off = bx * 4194304 + 7
            n = T.alloc_var("int32")
            n = bx * 8388608
            C[bx] = T.cast(off % 1000 + n % 7, "float32")

    @T.prim_func
    def wide(C: T.Tensor((1024,), "float32")):
        with T.Kernel(1024, threads=32) as bx:
            off = T.cast(bx, "int64") * 4194304 + 7
            C[bx] = T.cast(off % 1000, "float32")

    return k_step, k_overlap, k_fixed, k_sparse, k_varlen, inplace, shift_left, separate, wraps, wide
'''
_FUNCS: dict = {}


def _func(name: str):
    from tilelang_core.check import check_source

    if not _FUNCS:
        _FUNCS.update({k.name: k for k in check_source(SRC, "kernels.py").kernels})
    return _FUNCS[name]


def findings(name: str, out_idx=(), ints=None, **shapes):
    """Run kernel `name` sanitized on random inputs (outputs poisoned, `ints`: int32 tensors' values);
    [(code, line, message)]."""
    from tilelang_core.verify.sanitize import poison, sanitize_run

    func = _func(name)
    ints = ints or {}
    args = [torch.tensor(ints[p.name], dtype=torch.int32) if p.name in ints else torch.randn(*shapes[p.name])
            for p in func.params]
    for k in out_idx:
        poison(args[k])
    return [(d.code, d.span.line, d.message) for d in sanitize_run(func, tuple(out_idx), args)]


def line_of(text: str) -> int:
    return next(k for k, ln in enumerate(SRC.splitlines(), 1) if text in ln)


def test_k_loop_stepping_past_its_tile_skips_part_of_k():
    got = findings("k_step", (2,), A=(64, 128), B=(128, 64), C=(64, 64))
    assert [(c, ln) for c, ln, _ in got] == [("sanitize-reduction-step", line_of("T.copy(A[by * bm, k * 64], A_s)")),
                                            ("sanitize-reduction-step", line_of("T.copy(B[k * 64, bx * bn], B_s)"))]
    assert "reads A at offset 0 and then 64 along axis 1" in got[0][2] and "block (bx=0, by=0)" in got[0][2]
    assert "A[:, 32:64] is never read" in got[0][2] and "B[32:64, :] is never read" in got[1][2]


def test_k_loop_stepping_short_of_its_tile_sums_twice():
    got = findings("k_overlap", (1,), A=(64, 128), C=(64,))
    assert [(c, ln) for c, ln, _ in got] == [("sanitize-reduction-step", line_of("T.copy(A[bx * bm, k * 16], A_s)"))]
    assert "A[:, 16:32] is read twice" in got[0][2]


def test_reversed_k_loop_and_group_scales_are_clean():
    assert findings("k_fixed", (2,), A=(64, 128), B=(128, 64), C=(64, 64), S=(64, 4)) == []


def test_block_sparse_loop_skipping_tiles_is_clean():
    assert findings("k_sparse", (1,), A=(64, 128), C=(64,)) == []  # only consecutive iterations are compared


def test_a_base_read_from_a_tensor_is_followed_and_a_gather_is_not():
    got = findings("k_varlen", (4,), {"Starts": [16, 0], "Idx": [3, 0, 2, 1]}, A=(64, 128), B=(64, 128), C=(64,))
    assert [(c, ln) for c, ln, _ in got] == [("sanitize-reduction-step", line_of("T.copy(A[bx * bm, base + k * 64]"))]
    assert "reads A at offset 16 and then 80 along axis 1" in got[0][2]


def test_in_place_matmul_reads_what_another_block_wrote():
    got = findings("inplace", (), X=(64, 128), W=(128, 128))
    assert [(c, ln) for c, ln, _ in got] == [
        ("sanitize-inplace-hazard", line_of("T.copy(X[by * bm, k * bk], X_s)")),
        ("sanitize-inplace-hazard", line_of("T.copy(acc, X[by * bm, bx * bn])"))]
    write = line_of("T.copy(acc, X[by * bm, bx * bn])")
    assert (f"block (bx=1, by=0) reads X[0, 0], which block (bx=0, by=0) of the same launch wrote (line {write})"
            in got[0][2])
    read = line_of("T.copy(X[by * bm, k * bk], X_s)")
    assert (f"block (bx=1, by=0) overwrites X[0, 64], which block (bx=0, by=0) of the same launch read (line {read})"
            in got[1][2])


def test_a_shift_in_place_overwrites_what_the_previous_block_read():
    got = findings("shift_left", (), X=(128,))
    shift = line_of("X[bx * 32 + i] = X[bx * 32 + i + 1]")
    assert [(c, ln) for c, ln, _ in got] == [("sanitize-inplace-hazard", shift)]
    assert "block (bx=1) overwrites X[32], which block (bx=0) of the same launch read" in got[0][2]


def test_a_separate_output_read_and_written_by_its_own_block_is_clean():
    assert findings("separate", (), X=(64, 128), W=(128, 128), Y=(64, 128)) == []


def test_int32_scalar_that_wraps_is_reported_with_its_value():
    got = findings("wraps", (), C=(1024,))
    assert [(c, ln) for c, ln, _ in got] == [("sanitize-index-overflow", line_of("off = bx * 4194304 + 7")),
                                            ("sanitize-index-overflow", line_of("n = bx * 8388608"))]
    assert "bx * 4194304 reached 2,147,483,648 (first in block (bx=512))" in got[0][2] and "`off`" in got[0][2]
    assert "bx * 8388608 reached 2,147,483,648 (first in block (bx=256))" in got[1][2]
    assert "; n is computed in 32 bits" in got[1][2]


def test_int64_scalar_is_clean():
    assert findings("wide", (), C=(1024,)) == []


def test_sampled_run_reaches_the_last_block_and_skips_coverage(monkeypatch):
    from tilelang_core.verify import sanitize

    monkeypatch.setattr(sanitize, "SAMPLE_ELEMENTS", 0)
    got = findings("wraps", (0,), C=(1024,))  # as an out_idx output: blocks 1..1022 never write it
    assert [c for c, _, _ in got] == ["sanitize-index-overflow", "sanitize-index-overflow", "sanitize-sampled"]
    assert "reached 4,290,772,992 (first in block (bx=1023))" in got[0][2]
    assert "only the first and last block of each grid axis (bx) ran" in got[2][2]
