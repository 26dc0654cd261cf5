"""T.copy rules on hand-built IR: extents, head address, size-1 axes, whole shapes, dtypes, tile bounds."""
from __future__ import annotations

from analysis_irb import alloc, buf, codes, full, kernel, loop, mul, run, sl, sp, var
from tilelang_core.ir import nodes as N


def _copy(src, dst, params=(), allocs=()):
    return kernel([alloc(b) for b in allocs] + [N.Copy(src, dst, sp())], params=params)


A = buf("A", (1024, 1024), scope="global")
Q = buf("Q", (4, 512, 8, 64), scope="global")


def test_slice_into_tile_ok_and_mismatch():
    S = buf("A_shared", (128, 32))
    ok = _copy(sl(A, (0, 128), (0, 32)), full(S), (A,), (S,))
    assert codes(ok) == []
    bad = _copy(sl(A, (0, 128), (0, 64)), full(S), (A,), (S,))
    assert codes(bad) == ["copy-extent-mismatch"]
    msg = run(bad)[0][0].message
    assert "64 vs 32" in msg and "broadcast" in msg


def test_rank_handling_of_unit_dims():
    S = buf("Q_shared", (64, 64))
    ok = _copy(sl(Q, 1, (0, 64), 2, (0, 64)), full(S), (Q,), (S,))
    assert codes(ok) == []
    bad = _copy(sl(Q, (0, 2), (0, 64), 2, (0, 64)), full(S), (Q,), (S,))
    assert codes(bad) == ["copy-extent-mismatch"]


def test_head_address_takes_other_extent():
    S = buf("A_shared", (128, 32))
    assert codes(_copy(sl(A, 128, 64), full(S), (A,), (S,))) == []
    # head address into a tile: the other side's extent must fit from there
    assert codes(_copy(sl(A, (0, 64), (0, 32)), sl(S, 64, 0), (A,), (S,))) == []
    assert codes(_copy(sl(A, (0, 128), (0, 32)), sl(S, 64, 0), (A,), (S,))) == ["index-out-of-bounds"]


def test_whole_buffer_shapes():
    S, D = buf("S", (128, 32)), buf("D", (64, 64))
    assert codes(_copy(full(S), full(D), allocs=(S, D))) == ["copy-shape-mismatch"]
    E = buf("E", (128, 32), "float32", "local.fragment")
    assert codes(_copy(full(S), full(E), allocs=(S, E))) == []


def test_symbolic_extents_are_not_errors():
    m = var("M", "symbolic")
    S = buf("S", (m, 32))
    assert codes(_copy(sl(A, (0, m), (0, 32)), full(S), (A,), (S,))) == []
    assert codes(_copy(sl(A, (0, 128), (0, 32)), full(S), (A,), (S,))) == []


def test_dtype_rules():
    F = buf("C_local", (64, 64), "float32", "local.fragment")
    H = buf("C_half", (64, 64), "float16", "shared.dyn")
    I8 = buf("C_i8", (64, 64), "int8", "shared.dyn")
    I32 = buf("C_i32", (64, 64), "int32", "local.fragment")
    assert codes(_copy(full(F), full(H), allocs=(F, H))) == []
    assert codes(_copy(full(F), full(I8), allocs=(F, I8))) == ["copy-dtype-mismatch"]
    assert codes(_copy(full(I32), full(I8), allocs=(I32, I8))) == ["copy-dtype-mismatch"]
    assert codes(_copy(full(I8), full(I32), allocs=(I8, I32))) == []
    diag = run(_copy(full(F), full(I8), allocs=(F, I8)))[0][0]
    assert diag.severity.value == "warning"


def test_slice_of_tile_leaving_it_in_a_loop():
    S = buf("S", (128, 64))
    k = var("k")
    ok = loop(k, 2, [N.Copy(sl(A, (0, 128), (mul(k, 32), 32)), sl(S, (0, 128), (mul(k, 32), 32)), sp())])
    assert codes(kernel([alloc(S), ok], params=(A,))) == []
    bad = loop(k, 3, [N.Copy(sl(A, (0, 128), (mul(k, 32), 32)), sl(S, (0, 128), (mul(k, 32), 32)), sp())])
    assert codes(kernel([alloc(S), bad], params=(A,))) == ["index-out-of-bounds"]


def test_global_side_is_not_bounds_checked():
    S = buf("S", (128, 32))
    by = var("i")
    body = loop(by, 100, [N.Copy(sl(A, (mul(by, 128), 128), (0, 32)), full(S), sp())])
    assert codes(kernel([alloc(S), body], params=(A,))) == []


def test_mixed_slice_and_index_takes_the_tile_extent_like_tilelang():
    S = buf("A_shared", (128, 32))
    # A[0:128, 5] has one non-1 extent and the tile two: right-aligned, the index axis takes 32
    assert codes(_copy(sl(A, (0, 128), 5), full(S), (A,), (S,))) == []
    # but an index axis cannot stretch a 64-wide slice into the 32-wide tile
    assert codes(_copy(sl(A, 3, (0, 64)), full(S), (A,), (S,))) == ["copy-extent-mismatch"]


def test_legalize_pairs():
    from tilelang_core.analysis.checks.copy import legalize
    from analysis_irb import c

    ones = lambda *v: [c(x) for x in v]  # noqa: E731
    src, dst = legalize(ones(1, 1), ones(128, 32))
    assert [x.value for x in src] == [128, 32]
    assert legalize(ones(128, 64), ones(128, 32))[1].value == 32
    m = var("m", "symbolic")
    assert legalize([m, c(1)], ones(128, 32)) == "unknown"


def test_packed_fp4_copied_into_an_unpacked_tile_is_refused():
    F = buf("A_fp4", (64, 128), "float4_e2m1fn", "global")
    U = buf("A_unpacked", (32, 64), "float4_e2m1_unpacked")
    P = buf("A_packed", (32, 64), "float4_e2m1fn")
    assert codes(_copy(sl(F, (0, 32), (0, 64)), full(U), (F,), (U,))) == ["fp4-unpacking-copy"]
    assert "SIMT copy from packed global float4_e2m1fn" in run(_copy(sl(F, (0, 32), (0, 64)), full(U), (F,), (U,)))[0][0].message
    assert codes(_copy(sl(F, (0, 32), (0, 64)), full(P), (F,), (P,))) == []


def test_the_fp4_refusal_is_a_runtime_error_at_the_compile():
    from tilelang_core.diagnostics import CompileError, Diagnostic, Severity
    from tilelang_core.source import Span

    err = CompileError([Diagnostic("fp4-unpacking-copy", Severity.ERROR, "m", Span(1, 0, 1, 1))])
    assert isinstance(err, RuntimeError)


def test_an_explicit_tma_copy_of_packed_fp4_into_an_unpacked_tile_is_left_alone():
    F = buf("A_fp4", (64, 128), "float4_e2m1fn", "global")
    U = buf("A_unpacked", (32, 64), "float4_e2m1_unpacked")
    tma = kernel([alloc(U), N.Copy(sl(F, (0, 32), (0, 64)), full(U), sp(), tma=True)], params=(F,))
    assert codes(tma) == []
