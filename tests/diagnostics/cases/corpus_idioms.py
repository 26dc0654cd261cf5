"""Idioms from the real TileLang examples that must not be false errors, and Blackwell-only constructs that get one
needs-sm100 diagnostic per kernel (not a wrong fix on each use)."""
import tilelang
import tilelang.language as T


@tilelang.jit
def runtime_clear(A, B, block_M=64, block_N=64, block_K=32, num_stages=2):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float32)
    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_s = T.alloc_shared((block_M, block_K), T.float16)
        B_s = T.alloc_shared((block_K, block_N), T.float16)
        C_l = T.alloc_fragment((block_M, block_N), T.float32)
        for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
            T.copy(A[by * block_M, k * block_K], A_s)
            T.copy(B[k * block_K, bx * block_N], B_s)
            T.gemm(A_s, B_s, C_l, clear_accum=k == 0)
        T.copy(C_l, C[by * block_M, bx * block_N])
    return C


@tilelang.jit
def tmem_gemm(A, B, block_M, block_N, block_K, num_stages):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.bfloat16)
    B: T.Tensor((K, N), T.bfloat16)
    C = T.empty((M, N), T.bfloat16)
    with T.Kernel(T.ceildiv(M, block_M), T.ceildiv(N, block_N), threads=128) as (bx, by):
        A_s = T.alloc_shared((num_stages, block_M, block_K), T.bfloat16)
        B_s = T.alloc_shared((num_stages, block_K, block_N), T.bfloat16)
        C_tmem = T.alloc_tmem([block_M, block_N], T.float32)  # error: [needs-sm100]
        C_l = T.alloc_fragment((block_M, block_N), T.float32)
        consumed = T.alloc_barrier([1] * num_stages)
        for k in T.serial(T.ceildiv(K, block_K)):
            T.copy(A[bx * block_M, k * block_K], A_s[k % num_stages, :, :])
            T.copy(B[k * block_K, by * block_N], B_s[k % num_stages, :, :])
            T.gemm(A_s[k % num_stages, :, :], B_s[k % num_stages, :, :], C_tmem, clear_accum=k == 0)
        T.copy(C_tmem, C_l)
        T.copy(C_l, C[bx * block_M, by * block_N])
    return C
