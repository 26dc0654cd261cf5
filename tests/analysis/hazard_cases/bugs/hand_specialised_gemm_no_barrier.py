"""Role bug: a GEMM warp-specialised by hand. The first warp group loads the A and B tiles, the second multiplies
them - but nothing makes the consumer wait for the loads (no mbarrier, and no block barrier can sit inside the
`if`). The CPU backend runs the `if` branch before the `else` branch, so the tiles are always there."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def ws_gemm(M, N, K, block_M=128, block_N=128, block_K=32, dtype=T.float16, accum_dtype=T.float32):

    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            tx = T.get_thread_binding()
            T.clear(C_local)
            for ko in T.serial(T.ceildiv(K, block_K)):
                if tx < 128:
                    T.copy(A[by * block_M, ko * block_K], A_shared)
                    T.copy(B[ko * block_K, bx * block_N], B_shared)
                else:
                    T.gemm(A_shared, B_shared, C_local)  # bug: runs at the same time as the loads above
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm


def main():
    import torch
    kernel = ws_gemm(256, 256, 256)
    a, b = torch.randn(256, 256, dtype=torch.float16), torch.randn(256, 256, dtype=torch.float16)
    print((kernel(a, b).float() - (a.float() @ b.float())).abs().max())


if __name__ == "__main__":
    main()
