"""Elementwise C = A + B: each block loads a tile into fragments and adds it in a T.Parallel loop."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def elementwise_add(M, N, block_M=32, block_N=64, threads=128, dtype=T.float32):
    @T.prim_func
    def add(
        A: T.Tensor((M, N), dtype),
        B: T.Tensor((M, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_local = T.alloc_fragment((block_M, block_N), dtype)
            B_local = T.alloc_fragment((block_M, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), dtype)

            T.copy(A[by * block_M, bx * block_N], A_local)
            T.copy(B[by * block_M, bx * block_N], B_local)
            # The iterations of T.Parallel are spread over the block's threads.
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = A_local[i, j] + B_local[i, j]
            T.copy(C_local, C[by * block_M, bx * block_N])

    return add


def ref_program(A, B):
    return A + B


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    kernel = elementwise_add(512, 512, 32, 64)
    a = torch.randn(512, 512, device=device, dtype=torch.float32)
    b = torch.randn(512, 512, device=device, dtype=torch.float32)
    c = kernel(a, b)
    torch.testing.assert_close(c, ref_program(a, b), rtol=1e-5, atol=1e-5)
    print("elementwise_add: all checks pass")


if __name__ == "__main__":
    main()
