"""Mistake: T.clear on a global kernel parameter; fills are for shared, fragment or local tiles."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def zeros_like(M, N, block_M=64, block_N=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            T.clear(Y)  # error: [fill-scope]

    return main


def main():
    zeros_like(256, 256)


if __name__ == "__main__":
    main()
