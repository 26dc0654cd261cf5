"""GEMM in bfloat16 with float32 accumulation; smaller 64 x 64 tiles and a 2-stage pipeline."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul_bf16(M, N, K, block_M=64, block_N=64, block_K=32, num_stages=2, threads=128):
    dtype = T.bfloat16
    accum_dtype = T.float32

    @T.prim_func
    def gemm(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            C_shared = T.alloc_shared((block_M, block_N), dtype)

            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                # Slice form of T.copy: both sides cover block_M x block_K elements.
                T.copy(A[by * block_M:(by + 1) * block_M, ko * block_K:(ko + 1) * block_K], A_shared)
                T.copy(B[ko * block_K:(ko + 1) * block_K, bx * block_N:(bx + 1) * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)

            # Stage the result through shared memory for a coalesced store.
            T.copy(C_local, C_shared)
            T.copy(C_shared, C[by * block_M, bx * block_N])

    return gemm


def ref_program(A, B):
    return (A.float() @ B.float()).to(torch.bfloat16)


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    kernel = matmul_bf16(256, 128, 128, 64, 64, 32)
    a = torch.randn(256, 128, device=device, dtype=torch.bfloat16)
    b = torch.randn(128, 128, device=device, dtype=torch.bfloat16)
    c = kernel(a, b)
    torch.testing.assert_close(c, ref_program(a, b), rtol=2e-2, atol=2e-2)
    print("gemm_bf16: all checks pass")


if __name__ == "__main__":
    main()
