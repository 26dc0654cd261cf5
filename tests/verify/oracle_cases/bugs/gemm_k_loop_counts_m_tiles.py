"""Silent bug: the K loop's trip count was pasted from the grid's M extent, T.ceildiv(K, block_M), so with block_M
= 64 and block_K = 32 only the first half of K is summed. Every copy steps by its own tile and stays in bounds."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=64, block_N=64, block_K=32, num_stages=3, threads=128, dtype=T.float16,
           accum_dtype=T.float32):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_M), num_stages=num_stages):  # bug: block_K
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm


def main():
    kernel = matmul(128, 128, 256)
    a = torch.randn(128, 256, dtype=torch.float16)
    b = torch.randn(256, 128, dtype=torch.float16)
    print(kernel(a, b).float().abs().mean())


if __name__ == "__main__":
    main()
