"""GEMM with B stored N x K (row-major weights, as in a linear layer): C = A @ B^T via transpose_B=True."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul_nt(M, N, K, block_M=128, block_N=128, block_K=64, num_stages=2, dtype=T.float16, accum_dtype=T.float32):
    @T.prim_func
    def gemm_nt(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((N, K), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            # Rasterize blocks in panels of 4 for better L2 reuse.
            T.use_swizzle(panel_size=4)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[bx * block_N, ko * block_K], B_shared)
                # B_shared is block_N x block_K; transpose_B makes it the K x N operand.
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)

            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm_nt


def ref_program(A, B):
    return (A.float() @ B.float().T).to(A.dtype)


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    kernel = matmul_nt(256, 256, 128, 128, 128, 64)
    a = torch.randn(256, 128, device=device, dtype=torch.float16)
    b = torch.randn(256, 128, device=device, dtype=torch.float16)
    c = kernel(a, b)
    torch.testing.assert_close(c, ref_program(a, b), rtol=1e-2, atol=1e-2)
    print("gemm_transposed_b: all checks pass")


if __name__ == "__main__":
    main()
