"""The kernel parser: IR shape for GEMM and attention-like kernels, regions, loops, macros and spans."""
from __future__ import annotations

from fe_helpers import errors, launch, line_of, nodes, parse

from tilelang_core.ir import nodes as N
from tilelang_core.ir.arith import as_int, shape_ints
from tilelang_core.source import Span

GEMM = """
@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=32, dtype="float16", accum_dtype="float"):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((N, K), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.use_swizzle(10)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N:(bx + 1) * block_N, k * block_K:(k + 1) * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            T.copy(C_local, C[by * block_M, bx * block_N])
    return gemm

kernel = matmul(1024, 2048, 512)
"""


def test_gemm_ir_shape():
    (k,) = parse(GEMM)[0]
    assert k.name == "gemm" and k.factory == "matmul" and k.out_idx == (-1,)
    assert [shape_ints(p.shape) for p in k.params] == [(1024, 512), (2048, 512), (1024, 2048)]
    lau = launch(k)
    assert [g.value for g in lau.grid] == [16, 8] and as_int(lau.threads[0]) == 256
    assert [v.name for v in lau.block_vars] == ["bx", "by"]
    allocs = nodes(k, N.Allocate)
    assert [(a.buffer.name, a.buffer.scope, a.buffer.dtype, shape_ints(a.buffer.shape)) for a in allocs] == [
        ("A_shared", "shared.dyn", "float16", (128, 32)), ("B_shared", "shared.dyn", "float16", (128, 32)),
        ("C_local", "local.fragment", "float32", (128, 128))]
    (loop,) = nodes(k, N.For)
    assert loop.kind == "pipelined" and loop.num_stages == 3 and as_int(loop.extents[0]) == 16
    (gemm,) = nodes(k, N.Gemm)
    assert gemm.transpose_b and not gemm.transpose_a and gemm.a.buffer is allocs[0].buffer
    assert nodes(k, N.UseSwizzle)[0].panel_size == 10
    assert nodes(k, N.Fill)[0].is_clear


def test_copy_regions_point_slice_full():
    (k,) = parse(GEMM)[0]
    a_copy, b_copy, c_copy = nodes(k, N.Copy)
    assert a_copy.src.kind == "point" and [as_int(ax.extent) for ax in a_copy.src.axes] == [1, 1]
    assert a_copy.dst.kind == "full"
    assert b_copy.src.kind == "slice" and [as_int(ax.extent) for ax in b_copy.src.axes] == [128, 32]
    assert c_copy.dst.kind == "point" and c_copy.dst.buffer.name == "C"


def test_spans_are_the_users_positions():
    (k,) = parse(GEMM)[0]
    line = line_of(GEMM, "T.gemm(A_shared")
    (gemm,) = nodes(k, N.Gemm)
    assert gemm.span == Span(line, 16, line, 69)
    assert gemm.a.span == Span(line, 23, line, 31)
    alloc = nodes(k, N.Allocate)[0]
    aline = line_of(GEMM, "A_shared = T.alloc_shared")
    assert alloc.buffer.span == Span(aline, 23, aline, 64)
    dline = line_of(GEMM, "def gemm(")
    assert k.name_span == Span(dline, 8, dline, 12)
    assert k.params[0].span.line == dline
    assert all(n.span is not None for n in nodes(k, (N.For, N.Copy, N.Fill, N.Allocate, N.Launch, N.Load)))


ATTENTION = """
@tilelang.jit(out_idx=[3])
def flash(batch=2, heads=4, seq=256, dim=64, block_M=64, block_N=64, causal=True):
    scale = (1.0 / dim) ** 0.5 * 1.44269504
    shape = [batch, seq, heads, dim]

    @T.macro
    def rescale(acc, factor):
        for i, j in T.Parallel(block_M, dim):
            acc[i, j] *= factor[i]

    @T.prim_func
    def main(Q: T.Tensor(shape, "float16"), K: T.Tensor(shape, "float16"), V: T.Tensor(shape, "float16"),
             O: T.Tensor(shape, "float16")):
        with T.Kernel(T.ceildiv(seq, block_M), heads, batch, threads=128) as (bx, by, bz):
            Q_shared = T.alloc_shared([block_M, dim], "float16")
            K_shared = T.alloc_shared([block_N, dim], "float16")
            S = T.alloc_fragment([block_M, block_N], "float")
            acc = T.alloc_fragment([block_M, dim], "float")
            m = T.alloc_fragment([block_M], "float")
            m_prev = T.alloc_fragment([block_M], "float")
            factor = T.alloc_fragment([block_M], "float")
            count = T.alloc_var("int32", init=0)
            T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], Q_shared)
            T.fill(acc, 0)
            T.fill(m, -T.infinity("float"))
            loop_range = T.ceildiv((bx + 1) * block_M, block_N) if causal else T.ceildiv(seq, block_N)
            for k in T.Pipelined(loop_range, num_stages=2):
                T.copy(K[bz, k * block_N:(k + 1) * block_N, by, :], K_shared)
                if causal:
                    for i, j in T.Parallel(block_M, block_N):
                        S[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0, -T.infinity(S.dtype))
                else:
                    T.clear(S)
                T.gemm(Q_shared, K_shared, S, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)
                T.copy(m, m_prev)
                T.reduce_max(S, m, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    factor[i] = T.exp2(m_prev[i] * scale - m[i] * scale)
                rescale(acc, factor)
                count += 1
            T.copy(acc, O[bz, bx * block_M:(bx + 1) * block_M, by, :])
    return main
"""


def test_attention_like_kernel():
    kernels, diags = parse(ATTENTION)
    assert errors(diags) == []
    (k,) = kernels
    assert k.out_idx == (3,)
    assert [as_int(g) for g in launch(k).grid] == [4, 4, 2]
    q_copy = nodes(k, N.Copy)[0]
    assert q_copy.src.kind == "slice"
    assert [ax.sliced for ax in q_copy.src.axes] == [False, True, False, True]
    assert [as_int(ax.extent) for ax in q_copy.src.axes] == [1, 64, 1, 64]
    (red,) = nodes(k, N.Reduce)
    assert (red.op, red.dim, red.clear, red.dim_written) == ("max", 1, False, 1)
    (gemm,) = nodes(k, N.Gemm)
    assert gemm.policy == "FullRow" and gemm.transpose_b
    ifs = nodes(k, N.If)
    assert ifs == []  # `if causal:` is decided at trace time
    assert any(isinstance(n, N.Select) for n in nodes(k, N.Select))
    var_alloc = [a for a in nodes(k, N.Allocate) if a.buffer.scope == "local.var"][0]
    assert var_alloc.init.value == 0
    var_store = [s for s in nodes(k, N.Store) if s.buffer is var_alloc.buffer][0]
    assert isinstance(var_store.value, N.BinOp) and isinstance(var_store.value.lhs, N.Load)
    pipelined = [f for f in nodes(k, N.For) if f.kind == "pipelined"][0]
    (let,) = [s for s in nodes(k, N.LetStmt) if s.var.name == "loop_range"]
    assert pipelined.extents[0] is let.var and isinstance(let.value, N.Call) and let.value.name == "ceildiv"


def test_macro_is_inlined_with_arguments_substituted():
    (k,) = parse(ATTENTION)[0]
    acc = [a.buffer for a in nodes(k, N.Allocate) if a.buffer.name == "acc"][0]
    stores = [s for s in nodes(k, N.Store) if s.buffer is acc]
    assert len(stores) == 1
    line = line_of(ATTENTION, "acc[i, j] *= factor[i]")
    assert stores[0].span.line == line  # spans point into the macro body


def test_loop_kinds_and_let_bindings():
    kernels, diags = parse("""
@T.prim_func
def loops(A: T.Tensor((64, 64), T.float32), n: T.int32):
    with T.Kernel(1) as bx:
        L = T.alloc_local((8,), T.float32)
        for i in T.serial(2, 10, 2):
            L[0] = A[i, 0]
        for i in T.unroll(4):
            L[i] = 0.0
        for i in T.vectorized(4):
            L[i + 4] = 1.0
        for i, j in T.grid(4, 8):
            A[i, j] = L[j]
        for i in range(n):
            x = A[i, 0] * 2.0
            A[i, 1] = x
        for c in (1, 2):
            A[c, c] = T.float32(c)
""")
    assert errors(diags) == []
    (k,) = kernels
    assert isinstance(k.params[1], N.Var) and k.params[1].dtype == "int32" and k.params[1].kind == "param"
    fors = nodes(k, N.For)
    assert [f.kind for f in fors] == ["serial", "unroll", "vectorized", "grid", "serial"]
    assert as_int(fors[0].starts[0]) == 2 and as_int(fors[0].extents[0]) == 8 and as_int(fors[0].step) == 2
    assert launch(k).threads[0].value == 128
    (let,) = nodes(k, N.LetStmt)
    assert let.var.name == "x" and let.var.dtype == "float32"
    unrolled = [s for s in nodes(k, N.Store) if s.buffer.name == "A" and isinstance(s.value, N.Const)
                and s.value.value in (1.0, 2.0) and as_int(s.indices[0]) == as_int(s.indices[1])]
    assert len(unrolled) == 2


def test_annotate_layout_specs():
    kernels, diags = parse("""
from tilelang.layout import make_swizzled_layout

@T.prim_func
def lay(A: T.Tensor((128, 32), T.float16)):
    with T.Kernel(1, threads=(32, 4)) as bx:
        S = T.alloc_shared((128, 32), T.float16)
        F = T.alloc_fragment((128, 32), T.float32)
        T.annotate_layout({S: make_swizzled_layout(S), F: T.Fragment((64, 64), forward_thread_fn=lambda i, j: i)})
        T.annotate_layout({S: T.Layout((64, 64), lambda i, j: (i, j))})
        T.copy(A, S)
""")
    assert errors(diags) == []
    (k,) = kernels
    first, second = nodes(k, N.AnnotateLayout)
    assert [spec.kind for _, spec in first.entries] == ["swizzled", "fragment"]
    assert first.entries[1][1].shape == (64, 64)
    assert second.entries[0][1].shape == (64, 64) and second.entries[0][0].name == "S"
    assert [t.value for t in launch(k).threads] == [32, 4]


def test_symbolic_dims_and_runtime_if():
    kernels, diags = parse("""
m = T.dynamic("m")

@T.prim_func
def dyn(A: T.Tensor((m, 64), T.float32), B: T.Tensor((m, 64), T.float32)):
    with T.Kernel(T.ceildiv(m, 32), threads=128) as bx:
        for i, j in T.Parallel(32, 64):
            if bx * 32 + i < m:
                B[bx * 32 + i, j] = T.max(A[bx * 32 + i, j], 0.0)
            else:
                pass
""")
    assert errors(diags) == []
    (k,) = kernels
    assert k.params[0].shape[0].kind == "param"
    (cond,) = nodes(k, N.If)
    assert isinstance(cond.cond, N.Compare)
    assert nodes(k, N.Call)[-1].name == "max"


def test_atomic_add_and_cumsum_forms():
    kernels, diags = parse("""
@T.prim_func
def acc(A: T.Tensor((64, 64), T.float32), B: T.Tensor((64,), T.float32)):
    with T.Kernel(1) as bx:
        F = T.alloc_fragment((64, 64), T.float32)
        R = T.alloc_fragment((64,), T.float32)
        T.copy(A, F)
        T.cumsum(F, dim=1, reverse=True)
        T.reduce_sum(F, R, dim=-1)
        T.atomic_add(B[0], R[0])
        T.atomic_add(B[0:64], R)
""")
    assert errors(diags) == []
    (k,) = kernels
    (cs,) = nodes(k, N.CumSum)
    assert cs.dim == 1 and cs.reverse and cs.dst.buffer is cs.src.buffer
    (red,) = nodes(k, N.Reduce)
    assert red.dim == 1 and red.dim_written == -1
    scalar, tile = nodes(k, N.AtomicAdd)
    assert scalar.dst.kind == "point" and isinstance(scalar.value, N.Load)
    assert isinstance(tile.value, N.Region) and tile.dst.kind == "slice"


def test_tensor_subscript_form_buffer_params_and_pipeline_order():
    kernels, diags = parse("""
@T.prim_func
def k(A: T.Tensor[(64, 32), "float16"], B: T.Buffer((64, 32), "float16")):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared(64, "float16")
        for k in T.Pipelined(0, 32, num_stages=2, order=[1, 0], stage=[0, 1]):
            T.copy(A[:, k], S)
            T.copy(S, B[:, k])
""")
    assert errors(diags) == []
    (k,) = kernels
    assert [shape_ints(p.shape) for p in k.params] == [(64, 32), (64, 32)] and k.params[1].dtype == "float16"
    (loop,) = nodes(k, N.For)
    assert (loop.num_stages, loop.order, loop.stage) == (2, (1, 0), (0, 1))
    assert shape_ints(nodes(k, N.Allocate)[0].buffer.shape) == (64,)
    first = nodes(k, N.Copy)[0]
    assert [ax.sliced for ax in first.src.axes] == [True, False] and as_int(first.src.axes[0].extent) == 64


def test_tuple_assignment_evaluates_all_values_first():
    kernels, diags = parse("""
@T.prim_func
def k(A: T.Tensor((64,), T.float32)):
    with T.Kernel(1) as bx:
        L = T.alloc_local((2,), T.float32)
        S, R = T.alloc_shared((64,), T.float32), T.alloc_fragment((64,), T.float32)
        L[0], L[1] = L[1], L[0]
        T.copy(A, S)
""")
    assert errors(diags) == []
    (k,) = kernels
    assert [a.buffer.name for a in nodes(k, N.Allocate)] == ["L", "S", "R"]
    lets = nodes(k, N.LetStmt)
    stores = nodes(k, N.Store)
    assert len(lets) == 2 and [s.value for s in stores] == [lets[0].var, lets[1].var]
    assert [as_int(s.indices[0]) for s in stores] == [0, 1]
    assert [as_int(x.value.indices[0]) for x in lets] == [1, 0]
