"""Tiled GEMM, C = A @ B: float16 operands, float32 accumulation, a 3-stage software pipeline over K."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=32, num_stages=3, dtype=T.float16, accum_dtype=T.float32):
    @T.prim_func
    def gemm(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        # One block computes one block_M x block_N tile of C.
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                # Head-address copies: the extent comes from the shared tile.
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)

            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm


def ref_program(A, B):
    return (A.float() @ B.float()).to(A.dtype)


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    kernel = matmul(256, 256, 256, 128, 128, 32)
    a = torch.randn(256, 256, device=device, dtype=torch.float16)
    b = torch.randn(256, 256, device=device, dtype=torch.float16)
    c = kernel(a, b)
    torch.testing.assert_close(c, ref_program(a, b), rtol=1e-2, atol=1e-2)
    print("gemm: all checks pass")


if __name__ == "__main__":
    main()
