"""Mistake: 2048 threads per block; CUDA allows at most 1024 (real TileLang lowers it without complaint)."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def scale(N, block=2048):
    @T.prim_func
    def main(X: T.Tensor((N,), T.float32), Y: T.Tensor((N,), T.float32)):
        with T.Kernel(T.ceildiv(N, block), threads=2048) as bx:  # error: [threads-exceeded]
            x = T.alloc_fragment((block,), T.float32)
            T.copy(X[bx * block], x)
            for i in T.Parallel(block):
                x[i] = x[i] * 2.0
            T.copy(x, Y[bx * block])

    return main


def main():
    scale(1 << 20)


if __name__ == "__main__":
    main()
