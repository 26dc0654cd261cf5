"""Eager-style kernels (the JIT function is the kernel): T.const dims are specialised at compile time, so
they may size gemm tiles and fragment T.Parallel loops without any diagnostic."""
import tilelang
import tilelang.language as T


@tilelang.jit
def rowwise_topk(logits, topk=4, blk_m=64, threads=128):
    M, N = T.const("M, N")
    logits: T.Tensor([M, N], T.float32)
    out = T.empty([M, topk], T.float32)

    with T.Kernel(T.ceildiv(M, blk_m), threads=threads) as bx:
        frag = T.alloc_fragment([blk_m, N], T.float32)
        best = T.alloc_fragment([blk_m], T.float32)
        T.copy(logits[bx * blk_m, 0], frag)
        for k in T.serial(topk):
            T.reduce_max(frag, best, dim=1, clear=True)
            for i, j in T.Parallel(blk_m, N):
                frag[i, j] = T.if_then_else(frag[i, j] == best[i], -10000.0, frag[i, j])
            for i in T.Parallel(blk_m):
                out[bx * blk_m + i, k] = best[i]
    return out


@tilelang.jit
def small_gemm(A, B, block_M=64, block_N=64):
    M, N, K = T.const("M, N, K")
    A: T.Tensor((M, K), T.float16)
    B: T.Tensor((K, N), T.float16)
    C = T.empty((M, N), T.float32)

    with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
        A_shared = T.alloc_shared((block_M, K), T.float16)
        B_shared = T.alloc_shared((K, block_N), T.float16)
        C_local = T.alloc_fragment((block_M, block_N), T.float32)
        T.copy(A[by * block_M, 0], A_shared)
        T.copy(B[0, bx * block_N], B_shared)
        T.gemm(A_shared, B_shared, C_local, clear_accum=True)
        T.copy(C_local, C[by * block_M, bx * block_N])
    return C
