"""Checked for sm_90a and sm_86 at once: 3 stages of 128x128 + 128x128 fp16 tiles (192 KiB) fit an sm_90a
block (227 KiB) but not an sm_86 one (99 KiB); a 2-stage 128x64 variant (64 KiB) fits both."""
# tilelsp-test: targets=sm_90a,sm_86
import tilelang
import tilelang.language as T


def matmul(M, N, K, block_K, num_stages):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(N // 128, M // 128, threads=256) as (bx, by):  # error: [shared-memory-exceeded]
            A_shared = T.alloc_shared((128, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, 128), T.float16)
            C_local = T.alloc_fragment((128, 128), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(K // block_K, num_stages=num_stages):
                T.copy(A[by * 128, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * 128], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * 128, bx * 128])

    return main


big = matmul(4096, 4096, 4096, 128, 3)
small = matmul(4096, 4096, 4096, 64, 2)
