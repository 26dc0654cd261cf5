"""Mistake: summing a 16x256 fragment over dim=1 gives 16 values, but the output fragment has 256."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def row_sum(M, N, block_M=16):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, N), T.float32)
            s = T.alloc_fragment((N,), T.float32)
            T.copy(X[bx * block_M, 0], x)
            T.reduce_sum(x, s, dim=1)  # error: [reduce-shape-mismatch]
            T.copy(s[0:block_M], Y[bx * block_M])

    return main


def main():
    row_sum(1024, 256)


if __name__ == "__main__":
    main()
