"""Mistake: a 2-D fragment indexed with a single index."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def scale(M, N, block_M=32, block_N=32):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            x = T.alloc_fragment((block_M, block_N), T.float32)
            T.copy(X[by * block_M, bx * block_N], x)
            for i, j in T.Parallel(block_M, block_N):
                x[i] = x[i, j] * 2.0  # error: [buffer-rank-mismatch]
            T.copy(x, Y[by * block_M, bx * block_N])

    return main


def main():
    scale(256, 256)


if __name__ == "__main__":
    main()
