"""Silent bug: the block indices are swapped between T.Kernel and the indexing: bx walks the 4 column tiles of the
512-column output but indexes rows, and by walks the 2 row tiles but indexes columns. Blocks with bx >= 2 write
row tiles past the end of the 256-row tensor (nothing lands), and columns 256..511 are never written."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def transpose_copy(M, N, block=128):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float16), Y: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            tile = T.alloc_shared((block, block), T.float16)
            T.copy(X[bx * block, by * block], tile)
            T.copy(tile, Y[bx * block, by * block])  # error: [output-not-covered]  # warning: [tile-outside-tensor]

    return main


def ref_program(X):
    return X


def main():
    x = torch.randn(256, 512, dtype=torch.float16)
    print("max error:", (transpose_copy(256, 512)(x) - x).abs().max().item())


if __name__ == "__main__":
    main()
