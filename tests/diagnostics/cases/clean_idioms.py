"""Idioms from real TileLang kernels that must stay free of diagnostics: swizzled layouts, rasterization,
causal masks through let-bound indices, vectorized per-thread locals, guarded tails, split-K atomics."""
import tilelang
import tilelang.language as T
from tilelang.layout import make_swizzled_layout


@tilelang.jit(out_idx=[-1])
def gemm_swizzled(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.annotate_layout({A_shared: make_swizzled_layout(A_shared), B_shared: make_swizzled_layout(B_shared)})
            T.use_swizzle(panel_size=10)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                for k, j in T.Parallel(block_K, block_N):
                    B_shared[k, j] = B[ko * block_K + k, bx * block_N + j]
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1])
def causal_scores(seq_len=256, block_M=64, block_N=64):
    @T.prim_func
    def main(S: T.Tensor((seq_len, seq_len), T.float32), O: T.Tensor((seq_len, seq_len), T.float32)):
        with T.Kernel(T.ceildiv(seq_len, block_N), T.ceildiv(seq_len, block_M), threads=128) as (bx, by):
            acc = T.alloc_fragment((block_M, block_N), T.float32)
            row_max = T.alloc_fragment((block_M,), T.float32)
            T.copy(S[by * block_M, bx * block_N], acc)
            for i, j in T.Parallel(block_M, block_N):
                q_idx = by * block_M + i
                k_idx = bx * block_N + j
                acc[i, j] = T.if_then_else(q_idx >= k_idx, acc[i, j], -T.infinity(T.float32))
            T.reduce_max(acc, row_max, dim=1)
            for i, j in T.Parallel(block_M, block_N):
                acc[i, j] = T.exp2(acc[i, j] - row_max[i])
            T.copy(acc, O[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1])
def scale_rows(M=1000, N=256, block=128, vec=4):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float16), Y: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
            tile = T.alloc_shared((block, N), T.float16)
            regs = T.alloc_local((vec,), T.float16)
            T.copy(X[bx * block, 0], tile)
            for i, jv in T.Parallel(block, N // vec):
                for v in T.vectorized(vec):
                    regs[v] = tile[i, jv * vec + v]
                for v in T.vectorized(vec):
                    tile[i, jv * vec + v] = regs[v] * 2.0
            for i, j in T.Parallel(block, N):
                if bx * block + i < M:
                    Y[bx * block + i, j] = tile[i, j]

    return main


@tilelang.jit
def splitk(M=1024, N=1024, K=4096, block_M=128, block_N=128, block_K=32, split=4):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split, threads=128) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for ko in T.Pipelined(K // block_K // split, num_stages=2):
                T.copy(A[by * block_M, bz * (K // split) + ko * block_K], A_shared)
                T.copy(B[bz * (K // split) + ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            for i, j in T.Parallel(block_M, block_N):
                T.atomic_add(C[by * block_M + i, bx * block_N + j], C_local[i, j])

    return main


gemm_swizzled()
causal_scores()
scale_rows()
splitk()
