"""Mistake: A_shared is 128x32 but B_shared is 64x128, so the K of the two gemm operands disagrees (32 vs 64)."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def matmul(M, N, K, block_M=128, block_N=128, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((64, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, 64), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * 64, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)  # error: [gemm-shape-mismatch]
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def main():
    matmul(1024, 1024, 1024)


if __name__ == "__main__":
    main()
