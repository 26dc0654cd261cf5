"""Silent bug: the grid is sized with `M // block_M`, which drops the tail: for M = 1000 and 64-row tiles only 15
blocks run, and rows 960..999 of the output are never written (real TileLang compiles and runs it; those rows
keep whatever the fresh allocation held)."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def add_one(M, N, block_M=64, block_N=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), M // block_M, threads=128) as (bx, by):
            tile = T.alloc_fragment((block_M, block_N), T.float32)
            T.copy(X[by * block_M, bx * block_N], tile)
            for i, j in T.Parallel(block_M, block_N):
                tile[i, j] = tile[i, j] + 1.0
            T.copy(tile, Y[by * block_M, bx * block_N])  # error: [output-not-covered]

    return main


def ref_program(X):
    return X + 1


def main():
    x = torch.randn(1000, 256)
    y = add_one(1000, 256)(x)
    print("max error:", (y - (x + 1)).abs().max().item())


if __name__ == "__main__":
    main()
