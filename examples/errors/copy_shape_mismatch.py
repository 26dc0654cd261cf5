"""Mistake: T.copy between two whole shared buffers of different shapes (128x32 into 64x64); TileLang has no broadcast."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def transpose_tiles(M, N, block_M=128, block_N=32):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float16), B: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            S = T.alloc_shared((block_M, block_N), T.float16)
            D = T.alloc_shared((64, 64), T.float16)
            T.copy(A[by * block_M, bx * block_N], S)
            T.copy(S, D)  # error: [copy-shape-mismatch]
            T.copy(S, B[by * block_M, bx * block_N])

    return main


def main():
    transpose_tiles(1024, 1024)


if __name__ == "__main__":
    main()
