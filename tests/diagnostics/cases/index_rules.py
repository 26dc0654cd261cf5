"""Out-of-bounds indexing of shared, fragment and local buffers, with guards that must stay clean."""
import tilelang
import tilelang.language as T


def stencil(M=1024, N=1024, block=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            S = T.alloc_shared((block, block), T.float32)
            D = T.alloc_fragment((block, block), T.float32)
            acc = T.alloc_local((4,), T.float32)
            T.copy(X[by * block, bx * block], S)
            for i, j in T.Parallel(block, block):
                D[i, j] = S[i + 1, j] - S[i, j]  # error: [index-out-of-bounds]
            for i, j in T.Parallel(block, block):
                D[i, j] = T.if_then_else(i > 0, S[i - 1, j], S[i, j])
            for i, j in T.Parallel(block - 1, block):
                D[i, j] = S[i + 1, j]
            for i in T.serial(block):
                if i + 1 < block:
                    D[i, 0] = S[i + 1, 0]
            for k in T.unroll(4):
                acc[k] = S[0, k * 16 + 15]
            for k in T.serial(5):
                acc[k] = 0.0  # error: [index-out-of-bounds]
            D[0, -1] = S[block - 1, block - 1]
            for i in T.Parallel(block):
                acc[i % 4] = D[i, 0]  # error: [local-indexed-by-parallel]
            for i in T.Parallel(M - by * block):
                D[i, 0] = 0.0  # error: [fragment-parallel-dynamic]
            for i in T.Parallel(block):
                if by * block + i < M:
                    D[i, 0] = 0.0
            for i in T.Parallel(block):
                D[i, 1] = D[(i + 1) % block, 1]  # warning: [fragment-index-mismatch]
            for i, j in T.Parallel(block, block):
                D[i, j] = D[i, j] * 2.0
            for i, j in T.Parallel(block, block):
                D[i, j] = D[i, j] + D[i, 0]  # warning: [fragment-index-mismatch]
            for i, j in T.Parallel(block, block):
                S[i, j] = D[j, i]
            T.copy(D, Y[by * block, bx * block])

    return main


stencil()
