"""Nesting, pipeline, layout and reduction rules, and Facts.at, on hand-built IR."""
from __future__ import annotations

from analysis_irb import alloc, buf, c, codes, full, kernel, loop, run, sl, sp, store, var
from tilelang_core.ir import nodes as N


def test_nested_parallel_and_tile_ops_in_parallel():
    i, j = var("i"), var("j")
    F = buf("F", (8, 8), "float32", "local.fragment")
    fused = kernel([alloc(F), loop(i, 8, [loop(j, 8, [store(F, (i, j))], "parallel")], "parallel")])
    assert codes(fused) == []  # a perfect nest is one fused T.Parallel in TileLang
    nested = kernel([alloc(F), loop(i, 8, [store(F, (i, 0)), loop(j, 8, [store(F, (i, j))], "parallel")], "parallel")])
    assert codes(nested) == ["nested-parallel"]
    serial_inside = kernel([alloc(F), loop(i, 8, [loop(j, 8, [store(F, (i, j))], "parallel")], "serial")])
    assert codes(serial_inside) == []
    fill = kernel([alloc(F), loop(i, 8, [N.Fill(full(F), c(0.0, "float32"), True, sp())], "parallel")])
    assert codes(fill) == ["tile-op-in-parallel"]
    pipe = kernel([alloc(F), loop(i, 8, [loop(j, 8, [store(F, (i, j))], "pipelined", num_stages=2)], "parallel")])
    assert codes(pipe) == ["tile-op-in-parallel"]


def test_scalar_atomic_add_in_parallel_is_fine():
    i = var("i")
    G = buf("G", (8,), "float32", "global")
    F = buf("F", (8,), "float32", "local.fragment")
    scalar = N.AtomicAdd(sl(G, i), N.Load(F, (i,), sp()), sp())
    assert codes(kernel([alloc(F), loop(i, 8, [scalar], "parallel")], params=(G,))) == []
    tile = N.AtomicAdd(full(G), full(F), sp())
    assert codes(kernel([alloc(F), loop(i, 8, [tile], "parallel")], params=(G,))) == ["tile-op-in-parallel"]


def test_pipeline_config():
    k = var("k")
    F = buf("F", (8,), "float32", "local.fragment")
    body = [store(F, (0,)), store(F, (1,))]
    good = loop(k, 4, body, "pipelined", num_stages=2, order=(1, 0), stage=(0, 1))
    assert codes(kernel([alloc(F), good])) == []
    short = loop(k, 4, body, "pipelined", num_stages=2, order=(0, 1), stage=(0,))
    assert codes(kernel([alloc(F), short])) == ["pipeline-config"]
    wrong_len = loop(k, 4, body, "pipelined", order=(0, 1, 2), stage=(0, 0, 1))
    assert codes(kernel([alloc(F), wrong_len])) == ["pipeline-config"]
    dup = loop(k, 4, body, "pipelined", order=(0, 0), stage=(0, 1))
    assert codes(kernel([alloc(F), dup])) == ["pipeline-config"]


def test_annotate_layout_shape():
    S = buf("S", (128, 32))
    bad = N.AnnotateLayout(((S, N.LayoutSpec("layout", (64, 64), sp())),), sp())
    good = N.AnnotateLayout(((S, N.LayoutSpec("layout", (128, 32), sp())),), sp())
    swz = N.AnnotateLayout(((S, N.LayoutSpec("swizzled", None, sp())),), sp())
    assert codes(kernel([alloc(S), bad])) == ["layout-shape-mismatch"]
    assert codes(kernel([alloc(S), good, swz])) == []


def _reduce(src_shape, dst_shape, dim, written=None):
    S = buf("S", src_shape, "float32", "local.fragment")
    D = buf("D", dst_shape, "float32", "local.fragment")
    r = N.Reduce("max", full(S), full(D), dim, True, written if written is not None else dim, sp())
    return kernel([alloc(S), alloc(D), r])


def _reduce_over_threads(src_shape, dim, threads, gemm=False):
    S = buf("S", src_shape, "float32", "local.fragment")
    dst_shape = src_shape[:dim] + src_shape[dim + 1:]
    D = buf("D", dst_shape, "float32", "local.fragment")
    stmts = [alloc(S), alloc(D)]
    if gemm:
        A = buf("A", (src_shape[0], 32), "float16", "shared.dyn")
        B = buf("B", (32, src_shape[1]), "float16", "shared.dyn")
        stmts += [alloc(A), alloc(B), N.Gemm(full(A), full(B), full(S), span=sp())]
    return kernel(stmts + [N.Reduce("sum", full(S), full(D), dim, True, dim, sp())], threads=(threads,))


def test_a_cross_thread_reduction_needs_a_power_of_two_of_threads():
    """TileLang's logical_width: (1, 48) over 48 threads and (48, 2) by dim 0 over 96 gather 48 threads each."""
    assert codes(_reduce_over_threads((1, 48), 1, 48)) == ["reduce-thread-width", "threads-not-warp-multiple"]
    assert codes(_reduce_over_threads((48, 2), 0, 96)) == ["reduce-thread-width"]
    assert codes(_reduce_over_threads((4, 32), 1, 32)) == []
    assert codes(_reduce_over_threads((64, 2), 0, 128)) == []
    assert codes(_reduce_over_threads((128, 128), 1, 384)) == []  # rows of 128 threads in three warpgroups
    assert codes(_reduce_over_threads((64, 96), 1, 384, gemm=True)) == []  # an mma accumulator: quad reductions


def test_reductions():
    assert codes(_reduce((64, 128), (64,), 1)) == []
    assert codes(_reduce((64, 128), (64, 1), 1)) == []
    assert codes(_reduce((64, 128), (128,), 0)) == []
    assert codes(_reduce((64, 128), (64,), 1, written=-1)) == []
    assert codes(_reduce((64, 128), (128,), 1)) == ["reduce-shape-mismatch"]
    assert codes(_reduce((64, 128), (64,), 2, written=2)) == ["reduce-dim-out-of-range"]
    m = var("m", "symbolic")
    assert codes(_reduce((m, 128), (m,), 1)) == []


def test_facts_at_positions():
    S = buf("A_shared", (128, 32), line=60)
    C = buf("C_local", (128, 128), "float32", "local.fragment", line=61)
    i = var("i")
    use = N.Store(C, (i, c(0)), c(0.0, "float32"), N.Span(70, 8, 70, 20))
    f = kernel([alloc(S), alloc(C), loop(i, 128, [use], "parallel")])
    _, facts = run(f)
    fact = facts.at(60, 6)
    assert fact.name == "A_shared" and fact.bytes == 8192 and fact.shape == (128, 32)
    assert facts.at(70, 10).name == "C_local"
    k = facts.at(50, 5)
    assert k.name == "k" and k.threads == 128 and k.grid == (4, 4)
    assert facts.at(999, 0) is None


def test_malformed_ir_never_crashes():
    """Odd shapes (fewer axes than dims, float sizes, zero extents, huge shifts) give no exception."""
    i = var("i")
    S = buf("S", (64, 64))
    odd = N.Region(S, (N.Axis(c(0), c(64)),), "slice", sp())
    F = buf("F", (c(2.5, "float32"), 0), "float32", "local.fragment")
    stmts = [alloc(S), alloc(F),
             N.Copy(odd, full(F), sp()),
             N.Gemm(odd, odd, full(F), span=sp()),
             N.Reduce("sum", odd, full(F), 7, True, 7, sp()),
             loop(i, 0, [store(S, (N.BinOp("<<", i, c(10 ** 6)), 0))]),
             loop(i, 8, [store(S, (N.BinOp("//", i, c(0)), N.BinOp("%", i, c(0))))], "parallel")]
    diags, facts = run(kernel(stmts, threads=(c(0),)))
    assert all(d.code not in ("instance-error", "internal-error") for d in diags), [d.message for d in diags]
    assert facts.kernels[0].threads == 0


def _annotated_reduce(width, thread_of, threads=128):
    S = buf("S", (2, width), "float32", "local.fragment")
    D = buf("D", (2,), "float32", "local.fragment")
    table = tuple(thread_of(i, j) for i in range(2) for j in range(width))
    spec = N.AnnotateLayout(((S, N.LayoutSpec("fragment", (2, width), sp(), table)),), sp())
    return kernel([alloc(S), alloc(D), spec, N.Reduce("sum", full(S), full(D), 1, True, 1, sp())],
                  threads=(threads,))


def test_an_annotated_fragment_reduces_over_a_contiguous_warp_aligned_power_of_two_of_threads():
    """The thread map of T.Fragment(forward_fn=...) decides which threads combine each output."""
    assert codes(_annotated_reduce(512, lambda i, j: (i * 64 + j // 8))) == []  # [0, 128): two groups of 64
    assert codes(_annotated_reduce(512, lambda i, j: (32 + i * 32 + j // 16))) == []  # [32, 96)
    width = _annotated_reduce(384, lambda i, j: (j // 8))  # 48 threads a row
    assert codes(width) == ["reduce-thread-width"] and "48 threads" in run(width)[0][0].message
    apart = run(_annotated_reduce(512, lambda i, j: (i * 128 + j // 8), threads=256))[0]
    assert [d.code for d in apart] == ["reduce-thread-width"] and "[0, 64), [128, 192)" in apart[0].message
    skewed = run(_annotated_reduce(512, lambda i, j: (16 + i * 32 + j // 16)))[0]
    assert [d.code for d in skewed] == ["reduce-thread-width"] and "warp-aligned" in skewed[0].message
