"""Silent bug: the scaled tile is stored from S before S is loaded (the two statements are in the wrong order), so
the first store reads whatever shared memory held."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def scale(M, N, block=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            S = T.alloc_shared((block, block), T.float32)
            D = T.alloc_fragment((block, block), T.float32)
            for i, j in T.Parallel(block, block):
                D[i, j] = S[i, j] * 2.0  # error: [uninitialized-read]
            T.copy(X[by * block, bx * block], S)
            T.copy(D, Y[by * block, bx * block])

    return main


def ref_program(X):
    return 2 * X


def main():
    x = torch.randn(128, 128)
    print("max error:", (scale(128, 128)(x) - 2 * x).abs().max().item())


if __name__ == "__main__":
    main()
