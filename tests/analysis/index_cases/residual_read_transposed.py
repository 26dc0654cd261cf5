"""Indexing bug: a GEMM with a residual (out = X @ W + X, so K == N). The main loop reads X as [rows, k], but the
residual copy in the epilogue reads X[bx * block_N, by * block_M] - the block's tile of X transposed. In bounds (and
unnoticed) while M == K."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gemm_residual(M, K, block_M=64, block_N=64, block_K=64, dtype=T.float16, accum_dtype=T.float32):
    N = K

    @T.prim_func
    def main(X: T.Tensor((M, K), dtype), W: T.Tensor((K, N), dtype), Out: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            X_shared = T.alloc_shared((block_M, block_K), dtype)
            W_shared = T.alloc_shared((block_K, block_N), dtype)
            R_shared = T.alloc_shared((block_M, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(X[by * block_M, k * block_K], X_shared)
                T.copy(W[k * block_K, bx * block_N], W_shared)
                T.gemm(X_shared, W_shared, acc)
            T.copy(X[bx * block_N, by * block_M], R_shared)  # bug: the residual tile is X[by * block_M, bx * block_N]
            for i, j in T.Parallel(block_M, block_N):
                acc[i, j] += R_shared[i, j]
            T.copy(acc, Out[by * block_M, bx * block_N])

    return main
