"""Mistake: a stencil reads S[i + 1, j] for i up to 63 on a 64-row shared tile, one row past its end
(real TileLang neither guards nor warns about shared-memory reads)."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def row_diff(M, N, block=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            S = T.alloc_shared((block, block), T.float32)
            D = T.alloc_fragment((block, block), T.float32)
            T.copy(X[by * block, bx * block], S)
            for i, j in T.Parallel(block, block):
                D[i, j] = S[i + 1, j] - S[i, j]  # error: [index-out-of-bounds]
            T.copy(D, Y[by * block, bx * block])

    return main


def main():
    row_diff(1024, 1024)


if __name__ == "__main__":
    main()
