"""Split-K GEMM: each block multiplies one K-slice of A and B and atomically adds its tile into a float32 C."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_splitk(M, N, K, split_k=4, block_M=64, block_N=64, block_K=32, dtype=T.float16, accum_dtype=T.float32):
    k_per_split = K // split_k

    @T.prim_func
    def gemm_splitk(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), accum_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=128) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(k_per_split, block_K), num_stages=2):
                k0 = bz * k_per_split + ko * block_K
                T.copy(A[by * block_M, k0], A_shared)
                T.copy(B[k0, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            # Partial sums of the split_k blocks meet in global memory.
            T.atomic_add(C[by * block_M, bx * block_N], C_local)

    return gemm_splitk


def ref_program(A, B):
    return A.float() @ B.float()


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    kernel = matmul_splitk(128, 128, 512, 4)
    a = torch.randn(128, 512, device=device, dtype=torch.float16)
    b = torch.randn(512, 128, device=device, dtype=torch.float16)
    c = torch.zeros(128, 128, device=device, dtype=torch.float32)
    kernel(a, b, c)
    torch.testing.assert_close(c, ref_program(a, b), rtol=1e-2, atol=1e-2)
    print("gemm_splitk: all checks pass")


if __name__ == "__main__":
    main()
