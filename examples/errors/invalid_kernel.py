"""Mistake: T.Kernel with four grid dimensions; a launch grid has at most three."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def fill_ones(B, H, M, N):
    @T.prim_func
    def main(Y: T.Tensor((B, H, M, N), T.float32)):
        with T.Kernel(N, M, H, B, threads=32) as (bn, bm, bh, bb):  # error: [invalid-kernel]
            Y[bb, bh, bm, bn] = 1.0

    return main


def main():
    fill_ones(2, 4, 8, 16)


if __name__ == "__main__":
    main()
