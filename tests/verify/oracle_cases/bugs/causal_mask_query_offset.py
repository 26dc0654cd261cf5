"""Silent bug: the causal mask places the query tile at bx * block_N (the key tile size) instead of bx * block_M.
With square tiles the mask is right; with block_M != block_N queries see keys from their future (or lose their
past)."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[3], pass_configs={tilelang.PassConfigKey.TL_ENABLE_FAST_MATH: True})
def flash_attention(batch, heads, seq_len, dim, is_causal=False, block_M=64, block_N=64, num_stages=1,
                    threads=128):
    scale = (1.0 / dim) ** 0.5 * 1.44269504  # softmax scale folded with log2(e) for exp2
    shape = (batch, heads, seq_len, dim)
    dtype = T.float16
    accum_dtype = T.float32

    @T.prim_func
    def mha_fwd(
        Q: T.Tensor(shape, dtype),
        K: T.Tensor(shape, dtype),
        V: T.Tensor(shape, dtype),
        O: T.Tensor(shape, dtype),
    ):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=threads) as (bx, by, bz):
            Q_shared = T.alloc_shared((block_M, dim), dtype)
            K_shared = T.alloc_shared((block_N, dim), dtype)
            V_shared = T.alloc_shared((block_N, dim), dtype)
            scores = T.alloc_fragment((block_M, block_N), accum_dtype)
            probs = T.alloc_fragment((block_M, block_N), dtype)
            acc_o = T.alloc_fragment((block_M, dim), accum_dtype)
            m_new = T.alloc_fragment((block_M,), accum_dtype)
            m_old = T.alloc_fragment((block_M,), accum_dtype)
            rescale = T.alloc_fragment((block_M,), accum_dtype)
            tile_sum = T.alloc_fragment((block_M,), accum_dtype)
            denom = T.alloc_fragment((block_M,), accum_dtype)

            T.copy(Q[bz, by, bx * block_M:(bx + 1) * block_M, :], Q_shared)
            T.fill(acc_o, 0)
            T.fill(denom, 0)
            T.fill(m_new, -T.infinity(accum_dtype))

            n_tiles = T.ceildiv((bx + 1) * block_M, block_N) if is_causal else T.ceildiv(seq_len, block_N)
            for k in T.Pipelined(n_tiles, num_stages=num_stages):
                T.copy(K[bz, by, k * block_N:(k + 1) * block_N, :], K_shared)
                if is_causal:
                    for i, j in T.Parallel(block_M, block_N):
                        scores[i, j] = T.if_then_else(bx * block_N + i >= k * block_N + j, 0,  # bug: bx * block_M
                                                      -T.infinity(accum_dtype))
                else:
                    T.clear(scores)
                T.gemm(Q_shared, K_shared, scores, transpose_B=True, policy=T.GemmWarpPolicy.FullRow)

                # Online softmax: the running max only grows, so keep the old one and rescale.
                T.copy(m_new, m_old)
                T.reduce_max(scores, m_new, dim=1, clear=False)
                for i in T.Parallel(block_M):
                    rescale[i] = T.exp2((m_old[i] - m_new[i]) * scale)
                for i, j in T.Parallel(block_M, block_N):
                    scores[i, j] = T.exp2(scores[i, j] * scale - m_new[i] * scale)
                T.reduce_sum(scores, tile_sum, dim=1)
                for i in T.Parallel(block_M):
                    denom[i] = denom[i] * rescale[i] + tile_sum[i]
                for i, j in T.Parallel(block_M, dim):
                    acc_o[i, j] *= rescale[i]

                T.copy(scores, probs)
                T.copy(V[bz, by, k * block_N:(k + 1) * block_N, :], V_shared)
                T.gemm(probs, V_shared, acc_o, policy=T.GemmWarpPolicy.FullRow)

            for i, j in T.Parallel(block_M, dim):
                acc_o[i, j] /= denom[i]
            T.copy(acc_o, O[bz, by, bx * block_M:(bx + 1) * block_M, :])

    return mha_fwd


def main():
    kernel = flash_attention(1, 2, 128, 64, True)
    q, k, v = (torch.randn(1, 2, 128, 64, dtype=torch.float16) for _ in range(3))
    print(kernel(q, k, v).float().abs().mean())


if __name__ == "__main__":
    main()
