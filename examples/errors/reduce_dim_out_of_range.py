"""Mistake: reduce_max over dim=2 of a 2-D fragment; valid dims are -2..1."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def row_max(M, N, block_M=16):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            x = T.alloc_fragment((block_M, N), T.float32)
            m = T.alloc_fragment((block_M,), T.float32)
            T.copy(X[bx * block_M, 0], x)
            T.reduce_max(x, m, dim=2)  # error: [reduce-dim-out-of-range]
            T.copy(m, Y[bx * block_M])

    return main


def main():
    row_max(1024, 256)


if __name__ == "__main__":
    main()
