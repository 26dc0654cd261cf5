"""Mistake: T.copy silently converts a float32 accumulator into int8 output, losing range and precision."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def quantize(M, N, block_M=64, block_N=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Q: T.Tensor((M, N), T.int8)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            x = T.alloc_fragment((block_M, block_N), T.float32)
            T.copy(X[by * block_M, bx * block_N], x)
            for i, j in T.Parallel(block_M, block_N):
                x[i, j] = x[i, j] * 127.0
            T.copy(x, Q[by * block_M, bx * block_N])  # warning: [copy-dtype-mismatch]

    return main


def main():
    quantize(256, 256)


if __name__ == "__main__":
    main()
