"""Silent bug: a split-K GEMM (a third grid axis bz over K slices) stores its partial sums with a plain T.copy, so
the four blocks along bz overwrite the same C tile and the result is whichever slice finished last (it needs
T.atomic_add into a zeroed C, as examples/gemm_splitk.py does)."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_splitk(M, N, K, split_k=4, block_M=64, block_N=64, block_K=32):
    k_per_split = K // split_k

    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=128) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for ko in T.Pipelined(k_per_split // block_K, num_stages=2):
                T.copy(A[by * block_M, bz * k_per_split + ko * block_K], A_shared)
                T.copy(B[bz * k_per_split + ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])  # warning: [cross-block-race]

    return main


def ref_program(A, B):
    return A.float() @ B.float()


def main():
    a = torch.randn(128, 512, dtype=torch.float16)
    b = torch.randn(512, 128, dtype=torch.float16)
    c = torch.zeros(128, 128)
    matmul_splitk(128, 128, 512)(a, b, c)
    print("max error:", (c - a.float() @ b.float()).abs().max().item())


if __name__ == "__main__":
    main()
