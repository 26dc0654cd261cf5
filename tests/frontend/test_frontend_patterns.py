"""Patterns seen in real TileLang examples that must parse without false errors."""
from __future__ import annotations

from fe_helpers import errors, nodes, parse

from tilelang_core.ir import nodes as N
from tilelang_core.ir.arith import shape_ints


def test_views_helpers_and_trace_time_python():
    kernels, diags = parse("""
from tilelang.layout import make_swizzled_layout

def cdiv(a, b):
    return (a + b - 1) // b

@tilelang.jit(out_idx=[-1])
def conv(N, C, F, block_M=64, block_N=64, block_K=32, num_stages=None, use_layout=True, sizes=(1, 2, 3)):
    total = sum(s * 2 for s in sizes)
    shapes = [block_M * s for s in sizes]
    if num_stages is None:
        num_stages = 2

    @T.prim_func
    def main(data: T.Tensor((N, C), "float16"), out: T.Tensor((N, F), "float16")):
        with T.ClusterKernel(cdiv(F, block_N), T.ceildiv(N, block_M), threads=128, cluster_dims=2) as (bx, by):
            flat = T.Tensor((N * C,), "float16", data.data)
            view = T.reshape(flat, (N, C))
            A_shared = T.alloc_shared((block_M, block_K), "float16")
            C_local = T.alloc_fragment((block_M, block_N), "float")
            layout_map = {}
            if use_layout:
                layout_map[A_shared] = make_swizzled_layout(A_shared)
            if layout_map:
                T.annotate_layout(layout_map)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(C, block_K), num_stages=num_stages):
                T.copy(view[by * block_M, k * block_K], A_shared)
            for i in T.serial(len(shapes)):
                C_local[i, 0] = C_local[i, 0] + total
            T.copy(C_local, out[by * block_M, bx * block_N])
    return main

kernel = conv(256, 128, 64)
""")
    assert errors(diags) == []
    (k,) = kernels
    (loop,) = [f for f in nodes(k, N.For) if f.kind == "pipelined"]
    assert loop.num_stages == 2
    assert k.launch.grid[0].value == 1
    (copy_in, _) = nodes(k, N.Copy)
    assert copy_in.src.buffer.name == "view" and shape_ints(copy_in.src.buffer.shape) == (256, 128)
    (ann,) = nodes(k, N.AnnotateLayout)
    assert ann.entries[0][0].name == "A_shared"


def test_unknown_configuration_values_stay_quiet():
    kernels, diags = parse("""
@tilelang.jit(out_idx=[-1])
def k(M, N, block_M, block_N, threads, reduce_fn, enable, dtype):
    @T.prim_func
    def main(A: T.Tensor((M, N), dtype), B: T.Tensor((M,), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            S = T.alloc_fragment((block_M, block_N), dtype)
            R = T.alloc_fragment((block_M,), dtype)
            T.use_swizzle(panel_size=10, enable=enable)
            T.copy(A[bx * block_M, 0], S)
            reduce_fn(S, R, dim=1)
            T.reduce_sum(S, R, dim=1)
            T.copy(R, B[bx * block_M])
    return main
""")
    assert diags == []
    (k,) = kernels
    assert k.params[0].dtype == "unknown" and k.launch.threads[0].kind == "symbolic"


def test_eager_trace_time_statements_before_the_launch():
    kernels, diags = parse("""
@tilelang.jit
def add(A, B, block=128):
    N = T.const("N")
    print("building", block)
    parts = [block // 2 for _ in range(2)]
    A: T.Tensor((N,), T.float32)
    B: T.Tensor((N,), T.float32)
    C = T.empty((N,), T.float32)
    with T.Kernel(T.ceildiv(N, block), threads=parts[0]) as bx:
        for i in T.Parallel(block):
            C[bx * block + i] = A[bx * block + i] + B[bx * block + i]
    return C
""")
    assert errors(diags) == []
    (k,) = kernels
    assert k.launch.threads[0].value == 64 and k.out_idx == (2,)
