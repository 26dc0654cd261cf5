"""Kernels of the Hopper speed run (benchmarks/gpu_hopper.py): the quickstart GEMM with a rasterisation panel (or
none), and the fp8 (e4m3) GEMM with per-tensor scales (B given N x K)."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def hopper_matmul(M, N, K, block_M=128, block_N=256, block_K=64, num_stages=3, threads=256, panel=8,
                  dtype=T.float16, accum_dtype=T.float32):
    @T.prim_func
    def gemm(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            if panel:  # panel 0: no T.use_swizzle (a persistent kernel takes its default panels)
                T.use_swizzle(panel, enable=panel > 1)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm


@tilelang.jit(out_idx=[-1])
def hopper_fp8_matmul(M, N, K, block_M=128, block_N=256, block_K=128, num_stages=4, threads=256, panel=8,
                      dtype=T.float8_e4m3fn, out_dtype=T.bfloat16, accum_dtype=T.float32):
    """C = (A @ B^T) * scale_a * scale_b with fp8 A (M x K) and B (N x K), per-tensor float32 scales."""
    @T.prim_func
    def gemm_fp8(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((N, K), dtype),
        scale_a: T.Tensor((1,), T.float32),
        scale_b: T.Tensor((1,), T.float32),
        C: T.Tensor((M, N), out_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_N, block_K), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.use_swizzle(panel, enable=panel > 1)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[bx * block_N, ko * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = C_local[i, j] * scale_a[0] * scale_b[0]
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm_fp8
