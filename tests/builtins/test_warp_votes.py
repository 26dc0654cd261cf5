"""Warp votes T.any_sync / all_sync / ballot_sync / ballot and block votes T.syncthreads_count / and / or: over the
warp and thread reductions both backends lower; the predicate is an integer or boolean (a float is a TypeError outside
a kernel, bad-arguments inside), the mask the whole warp, the block 1-D."""
from __future__ import annotations

import pytest

import tilelang_core.language as T
from tilelang_core.diagnostics import DiagnosticSink
from tilelang_core.frontend import parse_captured
from tilelang_core.runtime.jit import to_ir


def votes():
    @T.prim_func
    def vote(A: T.Tensor((64,), T.int32), Any: T.Tensor((64,), T.int32), All: T.Tensor((64,), T.int32),
             Bal: T.Tensor((64,), T.uint64), One: T.Tensor((64,), T.uint64)):
        with T.Kernel(1, threads=64):
            tx = T.get_thread_binding()
            Any[tx] = T.any_sync(A[tx] > 5)
            All[tx] = T.all_sync(A[tx])
            Bal[tx] = T.ballot_sync(A[tx] > 5, 0xFFFFFFFF)
            One[tx] = T.ballot(1)

    return vote


def block_votes():
    @T.prim_func
    def block(A: T.Tensor((64,), T.int32), Cnt: T.Tensor((64,), T.int32), And: T.Tensor((64,), T.int32),
              Or: T.Tensor((64,), T.int32)):
        with T.Kernel(2, threads=64) as bx:
            tx = T.get_thread_binding()
            Cnt[tx] = T.syncthreads_count(A[tx] > 3)
            And[tx] = T.syncthreads_and(A[tx])
            Or[tx] = T.syncthreads_or(tx == 63)

    return block


def two_d_block():
    @T.prim_func
    def block(A: T.Tensor((64,), T.int32)):
        with T.Kernel(1, threads=(32, 2)):
            tx = T.get_thread_binding()
            A[tx] = T.syncthreads_or(tx == 0)

    return block


def bad(pred_kind):
    @T.prim_func
    def vote(A: T.Tensor((32,), T.float32), B: T.Tensor((32,), T.int32)):
        with T.Kernel(1, threads=32):
            tx = T.get_thread_binding()
            if pred_kind == "float":
                B[tx] = T.any_sync(A[tx])
            else:
                B[tx] = T.all_sync(A[tx] > 0, 0xFFFF)

    return vote


@pytest.mark.tvm
def test_votes_on_the_cpu_backend():
    torch = pytest.importorskip("torch")
    from tilelang_core.runtime.jit import compile as tl_compile

    kernel = tl_compile(votes(), target="cpu")
    a = torch.ones(64, dtype=torch.int32)
    a[3], a[40], a[63] = 9, 0, 7
    out = [torch.zeros(64, dtype=torch.int32), torch.zeros(64, dtype=torch.int32),
           torch.zeros(64, dtype=torch.uint64), torch.zeros(64, dtype=torch.uint64)]
    kernel(a, *out)
    any_, all_, bal, one = (t.tolist() for t in out)
    assert any_ == [1] * 64  # lane 3 of warp 0 and lane 31 of warp 1 vote
    assert all_ == [1] * 32 + [0] * 32  # A[40] == 0 in warp 1
    assert bal == [1 << 3] * 32 + [1 << 31] * 32
    assert one == [0xFFFFFFFF] * 64


@pytest.mark.tvm
def test_block_votes_on_the_cpu_backend():
    torch = pytest.importorskip("torch")
    from tilelang_core.runtime.jit import compile as tl_compile

    kernel = tl_compile(block_votes(), target="cpu")
    a = torch.arange(64, dtype=torch.int32)  # A[0] == 0: not every thread votes for `and`
    out = [torch.zeros(64, dtype=torch.int32) for _ in range(3)]
    kernel(a, *out)
    assert out[0].tolist() == [60] * 64 and out[1].tolist() == [0] * 64 and out[2].tolist() == [1] * 64


def test_a_block_vote_over_a_two_dimensional_block_is_refused():
    sink = DiagnosticSink()
    parse_captured(two_d_block().captured, sink)
    (diag,) = [d for d in sink.items if d.is_error]
    assert diag.code == "lowering-unsupported" and "2-D thread block" in diag.message


@pytest.mark.parametrize("kind, code, words", [("float", "bad-arguments", "requires an integer or boolean predicate"),
                                                ("mask", "lowering-unsupported", "over part of a warp")])
def test_a_float_predicate_or_a_partial_mask_is_refused_at_its_line(kind, code, words):
    sink = DiagnosticSink()
    parse_captured(bad(kind).captured, sink)
    (diag,) = [d for d in sink.items if d.is_error]
    assert diag.code == code and words in diag.message


class _Float:
    dtype = "float32"


@pytest.mark.parametrize("vote", [T.any_sync, T.all_sync, T.ballot_sync, T.ballot, T.syncthreads_count,
                                  T.syncthreads_and, T.syncthreads_or])
def test_a_float_predicate_outside_a_kernel_is_a_type_error(vote):
    with pytest.raises(TypeError, match="requires an integer or boolean predicate, got float32"):
        vote(_Float())


@pytest.mark.nvcc
def test_votes_compile_for_sm_90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    for func in (votes(), block_votes()):
        kernel = generate(to_ir(func), "sm_90a")
        assert compile_cubin(kernel.source, "sm_90a")[:4] == b"\x7fELF"
