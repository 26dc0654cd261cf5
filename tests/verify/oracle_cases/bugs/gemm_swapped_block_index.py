"""Silent bug: the grid is (N tiles, M tiles) as (bx, by), but the result tile is stored at C[bx * block_M, by *
block_N], with the two block indices swapped. With a square problem and square tiles every store stays in bounds
and every element of C is written once, so nothing complains: C just holds its tiles transposed."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=32, num_stages=2, threads=128, dtype=T.float16,
           accum_dtype=T.float32):
    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[bx * block_M, by * block_N])  # bug: bx and by swapped

    return gemm


def main():
    kernel = matmul(256, 256, 256)
    a = torch.randn(256, 256, dtype=torch.float16)
    b = torch.randn(256, 256, dtype=torch.float16)
    print(kernel(a, b).float().abs().mean())


if __name__ == "__main__":
    main()
