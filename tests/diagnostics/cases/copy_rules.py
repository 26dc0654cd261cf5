"""T.copy mistakes and legal forms: extents, head address, size-1 axes, whole buffers, dtypes, tile slices."""
import tilelang
import tilelang.language as T


def attention_like(batch=2, heads=8, seq_len=512, dim=64, block_M=64):
    shape = [batch, seq_len, heads, dim]

    @T.prim_func
    def main(Q: T.Tensor(shape, T.float16), O: T.Tensor(shape, T.float16)):
        with T.Kernel(T.ceildiv(seq_len, block_M), heads, batch, threads=128) as (bx, by, bz):
            Q_shared = T.alloc_shared((block_M, dim), T.float16)
            O_local = T.alloc_fragment((block_M, dim), T.float32)
            T.copy(Q[bz, bx * block_M:(bx + 1) * block_M, by, :], Q_shared)
            T.copy(Q[bz, bx * block_M:(bx + 2) * block_M, by, :], Q_shared)  # error: [copy-extent-mismatch]
            T.copy(Q_shared, O_local)
            T.copy(O_local, O[bz, bx * block_M:(bx + 1) * block_M, by, :])

    return main


def tiles(M=1024, N=1024):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float32), B: T.Tensor((M, N), T.int8)):
        with T.Kernel(N // 64, M // 128, threads=128) as (bx, by):
            S = T.alloc_shared((128, 32), T.float32)
            D = T.alloc_shared((64, 64), T.float32)
            W = T.alloc_shared((128, 64), T.float32)
            Q8 = T.alloc_fragment((128, 64), T.int8)
            T.copy(A[by * 128, bx * 64], W)
            T.copy(A[by * 128:by * 128 + 128, 0:64], S)  # error: [copy-extent-mismatch]
            T.copy(S, D)  # error: [copy-shape-mismatch]
            T.copy(W[0:128, 32:64], S)
            T.copy(W[0:128, 48:80], S)  # error: [index-out-of-bounds]
            T.copy(W, Q8)  # warning: [copy-dtype-mismatch]
            T.copy(Q8, B[by * 128, bx * 64])

    return main


attention_like()
tiles()
