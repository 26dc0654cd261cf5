"""Concurrency bug: two blur passes fused into one launch through a global scratch row. Each block writes its
tile of the first pass to `tmp`, then the second pass reads one element past each end of the tile - elements the
neighbouring blocks write. On the CPU the left neighbour has always run already (and the right one never has, which
the zero padding hides on small tests); on the GPU both are races."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def blur_twice(N, block=256, threads=128, dtype=T.float32):

    @T.prim_func
    def blur(X: T.Tensor((N,), dtype), tmp: T.Tensor((N,), dtype), Y: T.Tensor((N,), dtype)):
        with T.Kernel(T.ceildiv(N, block), threads=threads) as bx:
            for i in T.Parallel(block):
                g = bx * block + i
                if g < N:
                    left = T.if_then_else(g > 0, X[g - 1], X[g])
                    right = T.if_then_else(g + 1 < N, X[g + 1], X[g])
                    tmp[g] = (left + X[g] + right) / 3
            for i in T.Parallel(block):
                g = bx * block + i
                if g < N:
                    left = T.if_then_else(g > 0, tmp[g - 1], tmp[g])  # bug: tmp[g - 1] of the first element is the left block's
                    right = T.if_then_else(g + 1 < N, tmp[g + 1], tmp[g])
                    Y[g] = (left + tmp[g] + right) / 3

    return blur


def main():
    import torch
    kernel = blur_twice(4096)
    x = torch.randn(4096)
    print(kernel(x, torch.zeros(4096)).abs().mean())


if __name__ == "__main__":
    main()
