"""Flash-attention forward (batch, heads, seq, dim layout): online softmax over K/V tiles, two gemms per tile."""
import torch

import tilelang
import tilelang.language as T


# fast math (fp32 exp2 as ex2.approx.ftz, nvcc --use_fast_math), as TileLang's own flash-attention examples build
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
                        scores[i, j] = T.if_then_else(bx * block_M + i >= k * block_N + j, 0,
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


def ref_program(Q, K, V, is_causal=False):
    q, k, v = Q.float(), K.float(), V.float()
    scores = q @ k.transpose(-1, -2) / q.shape[-1] ** 0.5
    if is_causal:
        n = scores.shape[-1]
        mask = torch.ones(n, n, dtype=torch.bool, device=scores.device).tril()
        scores = scores.masked_fill(~mask, float("-inf"))
    return (torch.softmax(scores, dim=-1) @ v).to(Q.dtype)


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    kernel = flash_attention(1, 2, 128, 64, False, 64, 64)
    q = torch.randn(1, 2, 128, 64, device=device, dtype=torch.float16)
    k = torch.randn(1, 2, 128, 64, device=device, dtype=torch.float16)
    v = torch.randn(1, 2, 128, 64, device=device, dtype=torch.float16)
    o = kernel(q, k, v)
    torch.testing.assert_close(o, ref_program(q, k, v), rtol=1e-2, atol=1e-2)
    causal = flash_attention(1, 2, 128, 64, True, 64, 64)
    torch.testing.assert_close(causal(q, k, v), ref_program(q, k, v, is_causal=True), rtol=1e-2, atol=1e-2)
    print("flash_attention: all checks pass")


if __name__ == "__main__":
    main()
