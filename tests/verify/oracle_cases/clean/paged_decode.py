"""Clean: decode attention over a paged KV cache. Each sequence's keys and values live in the pages its block-table
row names, `cache_seqlens` says how many tokens it has; one block serves one sequence and all query heads (one
shared KV head), with an online softmax over the pages."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def paged_decode(batch, heads, dim, num_pages, max_pages, page_size=32, threads=128, dtype=T.float16,
                 accum_dtype=T.float32):
    scale = (1.0 / dim) ** 0.5 * 1.44269504  # log2(e): the softmax runs in exp2

    @T.prim_func
    def decode(
        Q: T.Tensor((batch, heads, dim), dtype),
        K_cache: T.Tensor((num_pages, page_size, dim), dtype),
        V_cache: T.Tensor((num_pages, page_size, dim), dtype),
        block_table: T.Tensor((batch, max_pages), T.int32),
        cache_seqlens: T.Tensor((batch,), T.int32),
        Out: T.Tensor((batch, heads, dim), dtype),
    ):
        with T.Kernel(batch, threads=threads) as bx:
            Q_shared = T.alloc_shared((heads, dim), dtype)
            K_shared = T.alloc_shared((page_size, dim), dtype)
            V_shared = T.alloc_shared((page_size, dim), dtype)
            acc_s = T.alloc_fragment((heads, page_size), accum_dtype)
            acc_s_cast = T.alloc_fragment((heads, page_size), dtype)
            acc_o = T.alloc_fragment((heads, dim), accum_dtype)
            m = T.alloc_fragment((heads,), accum_dtype)
            m_prev = T.alloc_fragment((heads,), accum_dtype)
            rescale = T.alloc_fragment((heads,), accum_dtype)
            row_sum = T.alloc_fragment((heads,), accum_dtype)
            denom = T.alloc_fragment((heads,), accum_dtype)

            T.copy(Q[bx, 0, 0], Q_shared)
            T.fill(acc_o, 0)
            T.fill(denom, 0)
            T.fill(m, -T.infinity(accum_dtype))
            seqlen = cache_seqlens[bx]
            for p in T.Pipelined(T.ceildiv(seqlen, page_size), num_stages=2):
                page = block_table[bx, p]
                T.copy(K_cache[page, 0, 0], K_shared)
                T.clear(acc_s)
                T.gemm(Q_shared, K_shared, acc_s, transpose_B=True)
                for h, j in T.Parallel(heads, page_size):  # the last page is partly filled
                    acc_s[h, j] = T.if_then_else(p * page_size + j < seqlen, acc_s[h, j], -T.infinity(accum_dtype))
                T.copy(m, m_prev)
                T.reduce_max(acc_s, m, dim=1, clear=False)
                for h in T.Parallel(heads):
                    rescale[h] = T.exp2(m_prev[h] * scale - m[h] * scale)
                for h, j in T.Parallel(heads, page_size):
                    acc_s[h, j] = T.exp2(acc_s[h, j] * scale - m[h] * scale)
                T.reduce_sum(acc_s, row_sum, dim=1)
                for h in T.Parallel(heads):
                    denom[h] = denom[h] * rescale[h] + row_sum[h]
                for h, d in T.Parallel(heads, dim):
                    acc_o[h, d] *= rescale[h]
                T.copy(acc_s, acc_s_cast)
                T.copy(V_cache[page, 0, 0], V_shared)
                T.gemm(acc_s_cast, V_shared, acc_o)
            for h, d in T.Parallel(heads, dim):
                acc_o[h, d] /= denom[h]
            T.copy(acc_o, Out[bx, 0, 0])

    return decode


def ref_program(Q, K_cache, V_cache, block_table, cache_seqlens):
    page_size, dim = K_cache.shape[1], K_cache.shape[2]
    outs = []
    for b in range(Q.shape[0]):
        n = int(cache_seqlens[b])
        pages = block_table[b, : (n + page_size - 1) // page_size].long()
        k = K_cache[pages].reshape(-1, dim)[:n].float()
        v = V_cache[pages].reshape(-1, dim)[:n].float()
        attn = torch.softmax(Q[b].float() @ k.T / dim**0.5, dim=-1)
        outs.append(attn @ v)
    return torch.stack(outs).to(Q.dtype)


def main():
    batch, heads, dim, num_pages, max_pages = 4, 16, 64, 32, 8
    kernel = paged_decode(batch, heads, dim, num_pages, max_pages)
    q = torch.randn(batch, heads, dim, dtype=torch.float16)
    k_cache = torch.randn(num_pages, 32, dim, dtype=torch.float16)
    v_cache = torch.randn(num_pages, 32, dim, dtype=torch.float16)
    table = torch.randperm(num_pages, dtype=torch.int32).reshape(batch, max_pages)
    seqlens = torch.tensor([1, 100, 256, 37], dtype=torch.int32)
    out = kernel(q, k_cache, v_cache, table, seqlens)
    torch.testing.assert_close(out, ref_program(q, k_cache, v_cache, table, seqlens), rtol=1e-2, atol=1e-2)
    print("paged_decode: all checks pass")


if __name__ == "__main__":
    main()
