"""GEMM in the eager style: the jitted function is the kernel; sizes are bound from the arguments' shapes."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul(A, B, block_M: int = 64, block_N: int = 64, block_K: int = 32):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float16)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, block_K), T.float16)
        B_shared = T.alloc_shared((block_K, block_N), T.float16)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(C_local)
        for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
            T.copy(A[by * block_M, ko * block_K], A_shared)
            T.copy(B[ko * block_K, bx * block_N], B_shared)
            T.gemm(A_shared, B_shared, C_local)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C


def ref_program(A, B):
    return (A.float() @ B.float()).to(A.dtype)


# The sizes come from the tensors at run time; this comment tells the checker which ones to check.
# tilelsp: matmul(M=128, N=128, K=256)
def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    a = torch.randn(128, 256, device=device, dtype=torch.float16)
    b = torch.randn(256, 128, device=device, dtype=torch.float16)
    c = matmul(a, b)
    torch.testing.assert_close(c, ref_program(a, b), rtol=1e-2, atol=1e-2)
    print("gemm_eager: all checks pass")


if __name__ == "__main__":
    main()
