"""Mistake: 100 threads per block is not a multiple of the warp size (32), so the last warp runs partly empty.

(In a kernel with T.gemm this is worse: real TileLang then finds no warp partition and fails.)"""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def axpy(N, alpha=2.0, block=400):
    @T.prim_func
    def main(X: T.Tensor((N,), T.float32), Y: T.Tensor((N,), T.float32), Z: T.Tensor((N,), T.float32)):
        with T.Kernel(T.ceildiv(N, block), threads=100) as bx:  # warning: [threads-not-warp-multiple]
            x = T.alloc_fragment((block,), T.float32)
            y = T.alloc_fragment((block,), T.float32)
            T.copy(X[bx * block], x)
            T.copy(Y[bx * block], y)
            for i in T.Parallel(block):
                y[i] = alpha * x[i] + y[i]
            T.copy(y, Z[bx * block])

    return main


def main():
    axpy(4000)


if __name__ == "__main__":
    main()
