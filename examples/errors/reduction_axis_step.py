"""Silent bug (the newcomer's quick fix): block_K was lowered to 32 so that the tiles fit, but the K loop still
steps by 64 (`T.ceildiv(K, 64)` iterations, offsets `k * 64`), so columns 32..63 of every 64 of A and rows 32..63
of every 64 of B are never multiplied: C misses half of the sum, with no error from real TileLang."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=64, block_N=64, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, 64), num_stages=2):
                T.copy(A[by * block_M, k * 64], A_shared)  # error: [reduction-axis-step]
                T.copy(B[k * 64, bx * block_N], B_shared)  # error: [reduction-axis-step]
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def ref_program(A, B):
    return A.float() @ B.float()


def main():
    a = torch.randn(128, 256, dtype=torch.float16)
    b = torch.randn(256, 128, dtype=torch.float16)
    c = matmul(128, 128, 256)(a, b)
    print("max error:", (c - a.float() @ b.float()).abs().max().item())


if __name__ == "__main__":
    main()
