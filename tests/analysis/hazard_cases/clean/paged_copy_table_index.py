"""Clean: the paged-KV gather indexing the cache with the page table read at the loop variable inside the copy, so
the prefetch for page i + 1 reads the table entry of i + 1."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gather_pages(batch, heads, max_pages, num_pages, page=64, dim=128, threads=128, dtype=T.float16):

    @T.prim_func
    def gather(K_cache: T.Tensor((num_pages, page, heads, dim), dtype),
               page_table: T.Tensor((batch, max_pages), T.int32),
               K_out: T.Tensor((batch, heads, max_pages * page, dim), dtype)):
        with T.Kernel(heads, batch, threads=threads) as (h, b):
            K_shared = T.alloc_shared((page, dim), dtype)
            for i in T.Pipelined(max_pages, num_stages=2):
                T.copy(K_cache[page_table[b, i], 0:page, h, 0:dim], K_shared)
                T.copy(K_shared, K_out[b, h, i * page, 0])

    return gather


def main():
    import torch
    kernel = gather_pages(2, 4, 8, 32)
    cache = torch.randn(32, 64, 4, 128, dtype=torch.float16)
    table = torch.randperm(32, dtype=torch.int32)[:16].reshape(2, 8)
    print(kernel(cache, table).float().abs().mean())


if __name__ == "__main__":
    main()
