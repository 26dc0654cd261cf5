"""Mistake: a T.Parallel nested in another T.Parallel whose body also has other statements.

Only a directly nested pair (the inner loop is the whole body of the outer one) is allowed, because it
fuses into one T.Parallel(block_M, block_N); here the first statement of the outer body prevents that."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def scale(M, N, block_M=32, block_N=32):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            x = T.alloc_fragment((block_M, block_N), T.float32)
            T.copy(X[by * block_M, bx * block_N], x)
            for i in T.Parallel(block_M):
                x[i, 0] = x[i, 0] * 2.0
                for j in T.Parallel(block_N):  # error: [nested-parallel]
                    x[i, j] = x[i, j] * 0.5
            T.copy(x, Y[by * block_M, bx * block_N])

    return main


def main():
    scale(1024, 1024)


if __name__ == "__main__":
    main()
