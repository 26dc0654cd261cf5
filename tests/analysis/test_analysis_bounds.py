"""Interval arithmetic and the index-bounds rule on hand-built IR."""
from __future__ import annotations

from analysis_irb import add, alloc, buf, c, codes, kernel, load, loop, mul, run, store, var
from tilelang_core.analysis.bounds import Interval, bound, loop_interval, refine
from tilelang_core.ir import nodes as N


def test_interval_arithmetic():
    i, j = var("i"), var("j")
    env = {i: Interval(0, 63), j: Interval(0, 3)}
    assert bound(add(i, 1), env) == Interval(1, 64)
    assert bound(mul(j, 16), env) == Interval(0, 48)
    assert bound(add(mul(j, 16), N.BinOp("%", i, c(16))), env) == Interval(0, 63)
    assert bound(N.BinOp("//", i, c(8)), env) == Interval(0, 7)
    assert bound(N.BinOp("-", i, j), env) == Interval(-3, 63)
    assert bound(N.Call("min", (i, c(10))), env) == Interval(0, 10)
    assert bound(add(i, var("n", "symbolic")), env) is None
    assert bound(N.BinOp("//", i, j), env) is None  # divisor may be 0


def test_loop_interval_and_refine():
    assert loop_interval(c(2), c(5), {}) == Interval(2, 6)
    assert loop_interval(c(0), c(8), {}, step=c(2)) == Interval(0, 6)
    i = var("i")
    env = {i: Interval(0, 63)}
    assert refine(N.Compare(">", i, c(0)), env)[i] == Interval(1, 63)
    assert refine(N.Compare("<", i, c(10)), env, negate=True)[i] == Interval(10, 63)
    assert refine(N.Compare("<", var("x", "symbolic"), c(3)), env) is None


def _kernel_with(stmt_fn, shape=(64, 64), scope="shared.dyn"):
    S = buf("S", shape, scope=scope)
    return kernel([alloc(S), stmt_fn(S)])


def test_parallel_oob_read_found_and_in_range_clean():
    i, j = var("i"), var("j")
    bad = _kernel_with(lambda S: loop((i, j), (64, 64), [store(S, (i, j), load(S, add(i, 1), j))], "parallel"))
    diags, _ = run(bad)
    assert [d.code for d in diags] == ["index-out-of-bounds"]
    assert "1..64" in diags[0].message and "0..63" in diags[0].message
    ok = _kernel_with(lambda S: loop((i, j), (63, 64), [store(S, (i, j), load(S, add(i, 1), j))], "parallel"))
    assert codes(ok) == []


def test_guarded_access_is_clean():
    i = var("i")
    guarded = _kernel_with(lambda S: loop(i, 64, [N.If(N.Compare("<", i, c(63)), store(S, (add(i, 1), 0)))]),
                           shape=(64, 1))
    assert codes(guarded) == []
    sel = _kernel_with(lambda S: loop(i, 64, [store(S, (i, 0), N.Select(N.Compare(">", i, c(0)),
                                                                       load(S, N.BinOp("-", i, c(1)), 0), c(0.0, "float16")))]),
                       shape=(64, 1))
    assert codes(sel) == []


def test_negative_constant_and_block_vars():
    assert codes(_kernel_with(lambda S: store(S, (-1, 0)))) == []
    assert codes(_kernel_with(lambda S: store(S, (-65, 0)))) == ["index-out-of-bounds"]
    i = var("i")
    assert codes(_kernel_with(lambda S: loop(i, 64, [store(S, (N.BinOp("-", i, c(1)), 0))]))) == ["index-out-of-bounds"]
    # block index bx in [0, 4): S[bx * 16 + 15] stays inside a 64-row tile
    S = buf("S", (64,), scope="local.fragment")
    f = kernel(lambda bx, by: [alloc(S), store(S, (add(mul(bx, 16), 15),))])
    assert codes(f) == []
    f = kernel(lambda bx, by: [alloc(S), store(S, (add(mul(bx, 16), 16),))])
    assert codes(f) == ["index-out-of-bounds"]


def test_let_bound_and_symbolic_and_global():
    x, i = var("x", "let"), var("i")
    f = _kernel_with(lambda S: loop(i, 8, [N.LetStmt(x, mul(i, 8)), store(S, (x, 0))]))
    assert codes(f) == []
    f = _kernel_with(lambda S: loop(i, 9, [N.LetStmt(x, mul(i, 8)), store(S, (x, 0))]))
    assert codes(f) == ["index-out-of-bounds"]
    n = var("n", "symbolic")
    assert codes(_kernel_with(lambda S: loop(i, n, [store(S, (i, 0))]))) == []
    G = buf("G", (64, 64), scope="global")
    # global tensors are never bounds-checked (TileLang guards them); a passed-in tensor written at fixed columns
    # may be meant to be written in part, so coverage says nothing either
    assert codes(kernel([loop(i, 128, [store(G, (i, 0))])], params=(G,)), dataflow=True) == []


def test_local_indexed_by_parallel():
    i = var("i")
    L = buf("L", (8,), "float32", "local")
    assert codes(kernel([alloc(L), loop(i, 8, [store(L, (i,))], "parallel")])) == ["local-indexed-by-parallel"]
    assert codes(kernel([alloc(L), loop(i, 8, [store(L, (i,))], "unroll")])) == []
    F = buf("F", (8,), "float32", "local.fragment")
    assert codes(kernel([alloc(F), loop(i, 8, [store(F, (i,))], "parallel")])) == []


def test_refine_affine_conditions():
    i, by = var("i"), var("by", "block")
    env = {i: Interval(0, 63), by: Interval(0, 15)}
    assert refine(N.Compare("<", add(i, 1), c(64)), env)[i] == Interval(0, 62)
    # by * 64 + i < 1000: the tightest sound bound for i uses by's smallest value
    assert refine(N.Compare("<", add(mul(by, 64), i), c(1000)), env)[i] == Interval(0, 63)
    assert refine(N.Compare("<", add(mul(by, 64), i), c(40)), env)[i] == Interval(0, 39)
    assert refine(N.Compare(">=", N.BinOp("-", i, c(1)), c(0)), env)[i] == Interval(1, 63)
    assert refine(N.Compare(">", c(10), add(i, 2)), env)[i] == Interval(0, 7)


def test_guarded_stencil_is_still_checked_inside_the_guard():
    i = var("i")
    inside = _kernel_with(lambda S: loop(i, 64, [N.If(N.Compare("<", add(i, 1), c(64)), store(S, (add(i, 2), 0)))]),
                          shape=(64, 1))
    assert codes(inside) == ["index-out-of-bounds"]  # i + 2 reaches 64 when i = 62
    ok = _kernel_with(lambda S: loop(i, 64, [N.If(N.Compare("<", add(i, 1), c(64)), store(S, (add(i, 1), 0)))]),
                      shape=(64, 1))
    assert codes(ok) == []


def test_stepped_loops():
    assert loop_interval(c(0), c(64), {}, step=c(2)) == Interval(0, 62)
    assert loop_interval(c(63), c(-64), {}, step=c(-1)) == Interval(0, 63)  # range(63, -1, -1)
    assert loop_interval(c(10), c(-10), {}, step=c(-3)) == Interval(1, 10)  # 10, 7, 4, 1
    assert loop_interval(c(0), c(-5), {}, step=c(1)) is None
    assert loop_interval(c(0), c(64), {}, step=var("s", "symbolic")) is None
    k = var("k")
    ok = _kernel_with(lambda S: loop(k, 64, [store(S, (add(k, 1), 0))], step=c(2)), shape=(64, 1))
    assert codes(ok) == []
    bad = _kernel_with(lambda S: loop(k, 64, [store(S, (add(k, 2), 0))], step=c(2)), shape=(64, 1))
    assert codes(bad) == ["index-out-of-bounds"]


def test_conditions_on_sums_and_lets_never_leave_a_false_error():
    i, j, q = var("i"), var("j"), var("q_idx", "let")
    # if i + j < 64: S[i + j]  (safe; narrowing i alone would not show it)
    f = _kernel_with(lambda S: loop((i, j), (64, 64), [N.If(N.Compare("<", add(i, j), c(64)),
                                                                store(S, (add(i, j), 0)))], "parallel"),
                     shape=(64, 1))
    assert codes(f) == []
    # q_idx = i * 1 + 32; if q_idx < 64: S[i + 32] and S[q_idx] are both inside
    f = _kernel_with(lambda S: loop(i, 64, [N.LetStmt(q, add(i, 32)),
                                            N.If(N.Compare("<", q, c(64)),
                                                 N.SeqStmt((store(S, (add(i, 32), 0)), store(S, (q, 0)))))]),
                     shape=(64, 1))
    assert codes(f) == []
    # without the guard the same store is reported
    f = _kernel_with(lambda S: loop(i, 64, [N.LetStmt(q, add(i, 32)), store(S, (add(i, 32), 0))]), shape=(64, 1))
    assert codes(f) == ["index-out-of-bounds"]
