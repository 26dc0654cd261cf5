"""Concurrency bug: a one-launch two-level sum. Every block writes its partial sum to global memory and the last
block adds the partials up - but nothing makes the last block wait for the others (it needs a second kernel, or a
ticket counter with acquire/release). The CPU backend runs the blocks in order, so the last one always sees every
partial; on the GPU it adds whatever is there."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def two_level_sum(N, block=1024, threads=256, dtype=T.float32):
    n_blocks = N // block

    @T.prim_func
    def total_sum(X: T.Tensor((N,), dtype), partials: T.Tensor((n_blocks,), dtype), out: T.Tensor((1,), dtype)):
        with T.Kernel(n_blocks, threads=threads) as bx:
            tile = T.alloc_fragment((block,), dtype)
            part = T.alloc_fragment((1,), dtype)
            T.copy(X[bx * block], tile)
            T.reduce_sum(tile, part, dim=0)
            T.copy(part, partials[bx])
            if bx == n_blocks - 1:
                every = T.alloc_fragment((n_blocks,), dtype)
                total = T.alloc_fragment((1,), dtype)
                T.copy(partials, every)  # bug: the other blocks' partials may not be written yet
                T.reduce_sum(every, total, dim=0)
                T.copy(total, out)

    return total_sum


def main():
    import torch
    kernel = two_level_sum(16384)
    x = torch.randn(16384)
    print(kernel(x, torch.zeros(16)), x.sum())


if __name__ == "__main__":
    main()
