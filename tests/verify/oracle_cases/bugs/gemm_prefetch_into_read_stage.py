"""Silent bug: a hand-written double buffer. Each iteration prefetches the next K tile and then multiplies the
current one, but the prefetch writes into stage k % 2 - the stage about to be read - instead of (k + 1) % 2, so
every product uses the next tile (the first tile is never used, the last one twice). Everything is in bounds and
initialised."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul_db(M, N, K, block_M=64, block_N=64, block_K=32, threads=128, dtype=T.float16, accum_dtype=T.float32):
    k_tiles = K // block_K

    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((2, block_M, block_K), dtype)
            B_shared = T.alloc_shared((2, block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            T.copy(A[by * block_M, 0], A_shared[0, :, :])
            T.copy(B[0, bx * block_N], B_shared[0, :, :])
            for k in T.serial(k_tiles):
                if k + 1 < k_tiles:
                    T.copy(A[by * block_M, (k + 1) * block_K], A_shared[k % 2, :, :])  # bug: (k + 1) % 2
                    T.copy(B[(k + 1) * block_K, bx * block_N], B_shared[k % 2, :, :])  # bug: (k + 1) % 2
                T.gemm(A_shared[k % 2, :, :], B_shared[k % 2, :, :], C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm


def main():
    kernel = matmul_db(128, 128, 256)
    a = torch.randn(128, 256, dtype=torch.float16)
    b = torch.randn(256, 128, dtype=torch.float16)
    print(kernel(a, b).float().abs().mean())


if __name__ == "__main__":
    main()
