"""Clean: symmetrising a square matrix (both axes are N) reads the mirrored tile on purpose, and a square tile is
transposed through shared memory; neither is an inconsistent use."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def symmetrise(N, block=64, dtype=T.float32):

    @T.prim_func
    def main(A: T.Tensor((N, N), dtype), B: T.Tensor((N, N), dtype)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(N, block), threads=128) as (bx, by):
            T_shared = T.alloc_shared((block, block), dtype)
            acc = T.alloc_fragment((block, block), dtype)
            T.copy(A[bx * block, by * block], T_shared)
            for i, j in T.Parallel(block, block):
                acc[i, j] = (A[by * block + i, bx * block + j] + T_shared[j, i]) * 0.5
            T.copy(acc, B[by * block, bx * block])

    return main
