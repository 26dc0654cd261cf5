"""Silent bug: C is listed in out_idx, so the JIT allocates it with torch.empty on every call, yet the split-K
blocks T.atomic_add their partial sums into it: the sums land on uninitialised memory (C must be passed in zeroed,
as examples/gemm_splitk.py does)."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
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
            T.atomic_add(C[by * block_M, bx * block_N], C_local)  # warning: [output-read-before-write]

    return main


def ref_program(A, B):
    return A.float() @ B.float()


def main():
    a = torch.randn(128, 512, dtype=torch.float16)
    b = torch.randn(512, 128, dtype=torch.float16)
    c = matmul_splitk(128, 128, 512)(a, b)
    print("max error:", (c - a.float() @ b.float()).abs().max().item())


if __name__ == "__main__":
    main()
