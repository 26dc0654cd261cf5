"""Silent bug: the kernel was meant to return the row sums too (out_idx=[1, 2]), but the store of S was dropped
while editing, so every call returns an uninitialised tensor for S."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[1, 2])
def normalize_rows(M, N, block_M=32):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32),
             S: T.Tensor((M,), T.float32)):  # warning: [output-never-written]
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, N), T.float32)
            sums = T.alloc_fragment((block_M,), T.float32)
            T.copy(X[bx * block_M, 0], tile)
            T.reduce_sum(tile, sums, dim=1)
            for i, j in T.Parallel(block_M, N):
                tile[i, j] = tile[i, j] / sums[i]
            T.copy(tile, Y[bx * block_M, 0])

    return main


def ref_program(X):
    return X / X.sum(dim=1, keepdim=True), X.sum(dim=1)


def main():
    x = torch.rand(64, 128) + 0.5
    y, s = normalize_rows(64, 128)(x)
    print("max error of S:", (s - x.sum(dim=1)).abs().max().item())


if __name__ == "__main__":
    main()
