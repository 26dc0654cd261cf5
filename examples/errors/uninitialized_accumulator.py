"""Silent bug: the GEMM accumulator C_local is never cleared, so T.gemm adds A @ B to whatever its registers held
(real TileLang compiles and runs it; the result is garbage plus the product)."""
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
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)  # error: [uninitialized-read]
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def ref_program(A, B):
    return A.float() @ B.float()


def main():
    a = torch.randn(128, 128, dtype=torch.float16)
    b = torch.randn(128, 128, dtype=torch.float16)
    c = matmul(128, 128, 128)(a, b)
    print("max error:", (c - a.float() @ b.float()).abs().max().item())


if __name__ == "__main__":
    main()
