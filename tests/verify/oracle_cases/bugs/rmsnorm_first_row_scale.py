"""Silent bug: the normalisation step multiplies every row of the block by the first row's 1/rms (inv_rms[0]
instead of inv_rms[i]). All indices are in bounds and everything is initialised; the rows just get the wrong
scale."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rms_norm(M, N, block_M=8, eps=1e-6, threads=128, dtype=T.float16, accum_dtype=T.float32):
    @T.prim_func
    def rmsnorm(X: T.Tensor((M, N), dtype), W: T.Tensor((N,), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x = T.alloc_fragment((block_M, N), accum_dtype)
            sq = T.alloc_fragment((block_M, N), accum_dtype)
            inv_rms = T.alloc_fragment((block_M,), accum_dtype)
            W_shared = T.alloc_shared((N,), dtype)
            T.copy(W, W_shared)
            T.copy(X[bx * block_M, 0], x)
            for i, j in T.Parallel(block_M, N):
                sq[i, j] = x[i, j] * x[i, j]
            T.reduce_sum(sq, inv_rms, dim=1)
            for i in T.Parallel(block_M):
                inv_rms[i] = T.rsqrt(inv_rms[i] / N + eps)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] * inv_rms[0] * W_shared[j]  # bug: inv_rms[i]
            T.copy(x, Y[bx * block_M, 0])

    return rmsnorm


def main():
    kernel = rms_norm(128, 512)
    x = torch.randn(128, 512, dtype=torch.float16)
    w = torch.rand(512, dtype=torch.float16) + 0.5
    print(kernel(x, w).float().abs().mean())


if __name__ == "__main__":
    main()
