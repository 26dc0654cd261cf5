"""T.gemm mistakes: K disagreement, accumulator shape, operand scope, dtypes, transposes."""
import tilelang
import tilelang.language as T


def k_mismatch(M=1024, N=1024, K=1024):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(N // 128, M // 64, threads=128) as (bx, by):
            A_shared = T.alloc_shared((64, 32), T.float16)
            B_shared = T.alloc_shared((64, 128), T.float16)
            C_local = T.alloc_fragment((64, 128), T.float32)
            T.clear(C_local)
            T.gemm(A_shared, B_shared, C_local)  # error: [gemm-shape-mismatch]
            T.copy(C_local, C[by * 64, bx * 128])

    return main


def transposed(M=1024, N=1024, K=1024, block_M=128, block_N=128, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((N, K), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_N, block_K), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[bx * block_N, k * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
                T.gemm(A_shared, B_shared, C_local)  # error: [gemm-shape-mismatch]
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


def acc_and_scope(M=1024, N=1024, K=1024):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(N // 128, M // 128, threads=256) as (bx, by):
            A_shared = T.alloc_shared((128, 32), T.float16)
            B_shared = T.alloc_shared((32, 128), T.float16)
            C_small = T.alloc_fragment((128, 64), T.float32)
            T.gemm(A_shared, B_shared, C_small)  # error: [gemm-accumulator-shape]
            T.gemm(A, B_shared, C_small)  # error: [gemm-operand-scope]

    return main


def dtypes(M=1024, N=1024, K=1024):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(N // 64, M // 64, threads=128) as (bx, by):
            A_shared = T.alloc_shared((64, 32), T.float16)
            B_f32 = T.alloc_shared((32, 64), T.float32)
            A8 = T.alloc_shared((64, 32), "float8_e4m3fn")
            B8 = T.alloc_shared((32, 64), "float8_e5m2")
            C_local = T.alloc_fragment((64, 64), T.float32)
            T.gemm(A_shared, B_f32, C_local)  # error: [gemm-dtype-mismatch]
            T.gemm(A8, B8, C_local)
            T.copy(C_local, C[by * 64, bx * 64])

    return main


k_mismatch()
transposed()
acc_and_scope()
dtypes()
