"""Mistake: T.reduce_max reads straight from the global input; reductions work on fragment or shared tiles."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def row_max(M, N, block_M=16):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            m = T.alloc_fragment((block_M,), T.float32)
            T.reduce_max(X[bx * block_M:(bx + 1) * block_M, :], m, dim=1)  # error: [reduce-scope]
            T.copy(m, Y[bx * block_M])

    return main


def main():
    row_max(1024, 256)


if __name__ == "__main__":
    main()
