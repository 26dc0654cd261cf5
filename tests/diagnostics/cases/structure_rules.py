"""Nesting rules, T.Pipelined order/stage, T.annotate_layout shapes and reductions."""
import tilelang
import tilelang.language as T


def nesting(M=256, N=256):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float32), B: T.Tensor((M, N), T.float32)):
        with T.Kernel(N // 64, M // 64, threads=128) as (bx, by):
            S = T.alloc_shared((64, 64), T.float32)
            F = T.alloc_fragment((64, 64), T.float32)
            for i in T.Parallel(64):
                for j in T.Parallel(64):
                    F[i, j] = 0.0
            for i in T.Parallel(64):
                F[i, 0] = 1.0
                for j in T.Parallel(64):  # error: [nested-parallel]
                    F[i, j] = 0.0
            for i in T.Parallel(64):
                T.copy(A[by * 64 + i, bx * 64:bx * 64 + 64], S[i, :])  # error: [tile-op-in-parallel]
            for i in T.Parallel(64):
                T.copy(A[by * 64 + i, bx * 64], S[i, 0])  # an element copy: the store S[i, 0] = A[..]
            for i in T.Parallel(64):
                for k in T.Pipelined(4, num_stages=2):  # error: [tile-op-in-parallel]
                    F[i, k] = 1.0
            T.annotate_layout({S: T.Layout((32, 128), lambda i, j: (i, j))})  # error: [layout-shape-mismatch]
            T.annotate_layout({F: T.Layout((64, 64), lambda i, j: (i, j))})  # error: [layout-kind-mismatch]
            T.copy(F, B[by * 64, bx * 64])

    return main


def pipeline(M=256, K=256):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((M, K), T.float16)):
        with T.Kernel(M // 64, threads=128) as bx:
            S = T.alloc_shared((64, 64), T.float16)
            F = T.alloc_fragment((64, 64), T.float16)
            for k in T.Pipelined(K // 64, num_stages=2, order=[0, 1], stage=[0]):  # error: [pipeline-config]
                T.copy(A[bx * 64, k * 64], S)
                T.copy(S, F)
            T.copy(F, B[bx * 64, 0])

    return main


def reductions(M=256, N=128):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float32), O: T.Tensor((M,), T.float32)):
        with T.Kernel(M // 64, threads=128) as bx:
            F = T.alloc_fragment((64, N), T.float32)
            m = T.alloc_fragment((64,), T.float32)
            m_wrong = T.alloc_fragment((N,), T.float32)
            T.copy(A[bx * 64, 0], F)
            T.reduce_max(F, m, dim=1)
            T.reduce_sum(F, m, dim=-1, clear=False)
            T.reduce_max(F, m_wrong, dim=1)  # error: [reduce-shape-mismatch]
            T.reduce_max(F, m, dim=2)  # error: [reduce-dim-out-of-range]
            T.reduce_max(A, m, dim=1)  # error: [reduce-scope]
            T.copy(m, O[bx * 64])

    return main


nesting()
pipeline()
reductions()
