"""Shared memory with pipeline stages, threads per block and register estimates."""
import tilelang
import tilelang.language as T


def matmul(M, N, K, block_M, block_N, block_K, num_stages, threads=128):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float16)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):  # error: [shared-memory-exceeded]
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


fits = matmul(4096, 4096, 4096, 128, 128, 32, 3)
too_big = matmul(4096, 4096, 4096, 256, 128, 128, 4, threads=256)


def threads_and_registers(M=1024):
    @T.prim_func
    def wide(A: T.Tensor((M, M), T.float32)):
        with T.Kernel(M // 64, threads=2048) as bx:  # error: [threads-exceeded]
            F = T.alloc_fragment((64, 64), T.float32)
            T.copy(A[bx * 64, 0], F)

    @T.prim_func
    def odd(A: T.Tensor((M, M), T.float32)):
        with T.Kernel(M // 64, threads=100) as bx:  # warning: [threads-not-warp-multiple]
            F = T.alloc_fragment((64, 64), T.float32)
            T.copy(A[bx * 64, 0], F)

    @T.prim_func
    def heavy(A: T.Tensor((M, M), T.float32)):
        with T.Kernel(M // 256, M // 256, threads=128) as (bx, by):
            C_local = T.alloc_fragment((256, 256), T.float32)  # warning: [register-pressure]
            T.copy(A[by * 256, bx * 256], C_local)
            T.copy(C_local, A[by * 256, bx * 256])

    return wide, odd, heavy


threads_and_registers()
