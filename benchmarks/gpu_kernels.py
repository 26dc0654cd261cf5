"""Benchmark kernels for the H200 runs: the fp16 GEMM with its tile shape, threads and stages as parameters."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def bench_matmul(M, N, K, block_M=128, block_N=128, block_K=32, num_stages=3, threads=128, dtype=T.float16,
                 accum_dtype=T.float32):
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
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[ko * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm


@tilelang.jit(out_idx=[-1])
def splitk_matmul(M, N, K, block_M=64, block_N=64, block_K=32, split_k=4, dtype=T.float16):
    """C += A @ B over split_k slices of K, combined with a tile T.atomic_add into a float32 C."""
    @T.prim_func
    def splitk(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        C: T.Tensor((M, N), T.float32),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=128) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for ko in T.Pipelined(K // block_K // split_k, num_stages=2):
                T.copy(A[by * block_M, (bz * (K // split_k // block_K) + ko) * block_K], A_shared)
                T.copy(B[(bz * (K // split_k // block_K) + ko) * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.atomic_add(C[by * block_M, bx * block_N], C_local)

    return splitk


@tilelang.jit(out_idx=[-1])
def column_stats(M, N, block_N=64):
    """Per column: max |x| over rows (reduce along dim 0, a shared-memory reduction) plus a serial-loop sum."""
    @T.prim_func
    def colstats(
        X: T.Tensor((M, N), T.float32),
        Y: T.Tensor((2, N), T.float32),
    ):
        with T.Kernel(T.ceildiv(N, block_N), threads=128) as bx:
            x = T.alloc_fragment((M, block_N), T.float32)
            amax = T.alloc_fragment((block_N,), T.float32)
            s = T.alloc_shared((M, block_N), T.float32)
            acc = T.alloc_var(T.float32)
            T.copy(X[0, bx * block_N], x)
            T.reduce_absmax(x, amax, dim=0)
            T.copy(X[0, bx * block_N], s)
            for j in T.Parallel(block_N):
                Y[0, bx * block_N + j] = amax[j]
            for j in T.Parallel(block_N):
                acc = 0.0
                for i in T.serial(M):
                    acc = acc + s[i, j]
                Y[1, bx * block_N + j] = acc

    return colstats


def ref_splitk(A, B):
    return A.float() @ B.float()


def ref_colstats(X):
    import torch

    return torch.stack([X.abs().amax(dim=0), X.sum(dim=0)])


@tilelang.jit(out_idx=[-1])
def dynamic_matmul(N=256, K=256, block_M=64, block_N=64, block_K=32):
    """A GEMM whose M is only known at run time (an int32 kernel argument bound from A's shape)."""
    M = T.dynamic("M")

    @T.prim_func
    def gemm_dyn(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=3):
                T.copy(A[by * block_M, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm_dyn


def ref_dynamic(A, B):
    return A.float() @ B.float()
