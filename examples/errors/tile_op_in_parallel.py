"""Mistake: a tile op (T.copy) inside a T.Parallel loop; tile ops are block-wide and must sit outside it."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def gather_rows(M, N, block_M=4, block_N=128):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float16), Y: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            S = T.alloc_shared((block_M, block_N), T.float16)
            for r in T.Parallel(block_M):
                T.copy(X[by * block_M + r, bx * block_N:(bx + 1) * block_N], S[r, :])  # error: [tile-op-in-parallel]
            T.copy(S, Y[by * block_M, bx * block_N])

    return main


def main():
    gather_rows(1024, 1024)


if __name__ == "__main__":
    main()
