"""Silent bug: the running row maximum m is combined with T.reduce_max(..., clear=False) on every tile, but nothing
set it to -inf first (flash attention's T.fill(m, -T.infinity(...)) before the loop is missing)."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def row_max(M, N, block_M=64, block_N=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, block_N), T.float32)
            m = T.alloc_fragment((block_M,), T.float32)
            for k in T.Pipelined(T.ceildiv(N, block_N), num_stages=1):
                T.copy(X[bx * block_M, k * block_N], tile)
                T.reduce_max(tile, m, dim=1, clear=False)  # error: [uninitialized-read]
            T.copy(m, Y[bx * block_M])

    return main


def ref_program(X):
    return X.amax(dim=1)


def main():
    x = torch.randn(128, 256)
    y = row_max(128, 256)(x)
    print("max error:", (y - x.amax(dim=1)).abs().max().item())


if __name__ == "__main__":
    main()
