"""Silent bug: a paged KV-cache write reads the page of every sequence from the first row of the block table (the
batch index is missing), so all sequences overwrite sequence 0's pages and their own pages keep stale data."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit
def paged_kv_write(batch, seqlen, dim, num_pages, page_size=16, threads=128, dtype=T.float16):
    pages_per_seq = seqlen // page_size

    @T.prim_func
    def write(
        K: T.Tensor((batch, seqlen, dim), dtype),
        block_table: T.Tensor((batch, pages_per_seq), T.int32),
        K_cache: T.Tensor((num_pages, page_size, dim), dtype),
    ):
        # One block moves one page of one sequence.
        with T.Kernel(pages_per_seq, batch, threads=threads) as (bx, by):
            K_shared = T.alloc_shared((page_size, dim), dtype)
            page = block_table[0, bx]
            T.copy(K[by, bx * page_size, 0], K_shared)
            T.copy(K_shared, K_cache[page, 0, 0])

    return write


def ref_program(K, block_table, num_pages, page_size=16):
    out = torch.zeros(num_pages, page_size, K.shape[-1], dtype=K.dtype)
    out[block_table.flatten().long()] = K.reshape(-1, page_size, K.shape[-1])
    return out


def main():
    batch, seqlen, dim, num_pages = 2, 64, 64, 16
    kernel = paged_kv_write(batch, seqlen, dim, num_pages)
    k = torch.randn(batch, seqlen, dim, dtype=torch.float16)
    table = torch.randperm(num_pages, dtype=torch.int32)[: batch * seqlen // 16].reshape(batch, -1)
    cache = torch.zeros(num_pages, 16, dim, dtype=torch.float16)
    expected = ref_program(k, table, num_pages)
    kernel(k, table, cache)  # the table is a permutation: each block writes its own page
    torch.testing.assert_close(cache, expected)
    print("paged_kv_write: all checks pass")


if __name__ == "__main__":
    main()
