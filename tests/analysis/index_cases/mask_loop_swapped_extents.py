"""Indexing bug: flash attention's causal mask loop iterates T.Parallel(block_N, block_M) over the score tile
acc_s (block_M x block_N), so `i` runs over key positions but indexes the query axis. With the usual
block_M == block_N it is in bounds and masks the transposed triangle."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def causal_scores(seq, dim, block_M=64, block_N=64, dtype=T.float16, accum_dtype=T.float32):

    @T.prim_func
    def main(Q: T.Tensor((seq, dim), dtype), Kt: T.Tensor((seq, dim), dtype), S: T.Tensor((seq, seq), accum_dtype)):
        with T.Kernel(T.ceildiv(seq, block_N), T.ceildiv(seq, block_M), threads=128) as (bx, by):
            Q_shared = T.alloc_shared((block_M, dim), dtype)
            K_shared = T.alloc_shared((block_N, dim), dtype)
            acc_s = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.copy(Q[by * block_M, 0], Q_shared)
            T.copy(Kt[bx * block_N, 0], K_shared)
            T.clear(acc_s)
            T.gemm(Q_shared, K_shared, acc_s, transpose_B=True)
            for i, j in T.Parallel(block_M, block_N):
                acc_s[i, j] = acc_s[i, j] * 0.125
            for i, j in T.Parallel(block_N, block_M):
                acc_s[i, j] = T.if_then_else(by * block_M + j >= bx * block_N + i, acc_s[i, j], -T.infinity(accum_dtype))  # bug
            T.copy(acc_s, S[by * block_M, bx * block_N])

    return main
