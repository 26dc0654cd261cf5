"""The error classes of research/tilelang.md §3.2 that real TileLang misses or reports without a location,
each caught here at the user's line (one kernel per row of that table)."""
import tilelang
import tilelang.language as T


def copy_whole_shapes(M=1024, N=1024):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float16)):
        with T.Kernel(N // 64, M // 128, threads=128) as (bx, by):
            S = T.alloc_shared((128, 32), T.float16)
            D = T.alloc_shared((64, 64), T.float16)
            T.copy(A[by * 128, bx * 32], S)
            T.copy(S, D)  # error: [copy-shape-mismatch]

    return main


def copy_slice_into_smaller_tile(M=1024, K=1024):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16)):
        with T.Kernel(M // 128, threads=128) as bx:
            S = T.alloc_shared((128, 32), T.float16)
            r = bx * 128
            T.copy(A[r:r + 128, 0:64], S)  # error: [copy-extent-mismatch]

    return main


def gemm_k_and_dtypes(M=1024, N=1024):
    @T.prim_func
    def main(C: T.Tensor((M, N), T.float32)):
        with T.Kernel(N // 128, M // 128, threads=128) as (bx, by):
            A_s = T.alloc_shared((128, 32), T.float16)
            B_s = T.alloc_shared((64, 128), T.float16)
            B32 = T.alloc_shared((32, 128), T.float32)
            C_l = T.alloc_fragment((128, 128), T.float32)
            T.gemm(A_s, B_s, C_l)  # error: [gemm-shape-mismatch]
            T.gemm(A_s, B32, C_l)  # error: [gemm-dtype-mismatch]
            T.copy(C_l, C[by * 128, bx * 128])

    return main


def huge_shared(M=1024):
    @T.prim_func
    def main(A: T.Tensor((M, 1024), T.float16)):
        with T.Kernel(M // 256, threads=128) as bx:  # error: [shared-memory-exceeded]
            S = T.alloc_shared((256, 1024), T.float16)
            T.copy(A[bx * 256, 0], S)
            T.copy(S, A[bx * 256, 0])

    return main


def layout_and_names(M=1024):
    @T.prim_func
    def main(A: T.Tensor((M, 32), T.float16)):
        with T.Kernel(M // 128, threads=128) as bx:
            S = T.alloc_shared((128, 32), T.float16)
            T.annotate_layout({S: T.Layout((64, 64), lambda i, j: (i, j))})  # error: [layout-shape-mismatch]
            T.copy(A[bx * 128, 0], SS)  # error: [undefined-name]

    return main


def stencil_threads_local(M=1024):
    @T.prim_func
    def main(A: T.Tensor((M, 64), T.float32)):
        with T.Kernel(M // 64, threads=2048) as bx:  # error: [threads-exceeded]
            S = T.alloc_shared((64, 64), T.float32)
            F = T.alloc_fragment((64, 64), T.float32)
            L = T.alloc_local((64,), T.float32)
            T.copy(A[bx * 64, 0], S)
            for i, j in T.Parallel(64, 64):
                F[i, j] = S[i + 1, j]  # error: [index-out-of-bounds]
            for i in T.Parallel(64):
                L[i] = F[i, 0]  # error: [local-indexed-by-parallel]
            T.copy(F, A[bx * 64, 0])

    return main


copy_whole_shapes()
copy_slice_into_smaller_tile()
gemm_k_and_dtypes()
huge_shared()
layout_and_names()
stencil_threads_local()
