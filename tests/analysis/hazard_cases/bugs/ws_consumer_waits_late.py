"""Role bug: a T.ws producer/consumer GEMM with mbarriers where the consumer's wait was moved below the gemm (to
"overlap" it): the gemm reads the tiles before the producer's loads are known to have landed. The CPU backend
runs the producer's iteration first, so the tiles are always ready there."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def ws_gemm_mbar(M, N, K, block_M=128, block_N=128, block_K=64, dtype=T.float16, accum_dtype=T.float32):

    @T.prim_func
    def gemm(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=256) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            data_is_ready = T.alloc_barrier(arrive_count=128)
            compute_is_done = T.alloc_barrier(arrive_count=128)
            with T.ws(1):
                T.clear(C_local)
            for ko in T.serial(T.ceildiv(K, block_K)):
                with T.ws(0):
                    T.barrier_wait(compute_is_done, (ko + 1) % 2)
                    T.copy(A[by * block_M, ko * block_K], A_shared)
                    T.copy(B[ko * block_K, bx * block_N], B_shared)
                    T.barrier_arrive(data_is_ready)
                with T.ws(1):
                    T.gemm(A_shared, B_shared, C_local)  # bug: the wait for data_is_ready comes after the gemm
                    T.barrier_wait(data_is_ready, ko % 2)
                    T.barrier_arrive(compute_is_done)
            with T.ws(1):
                T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm


def main():
    import torch
    kernel = ws_gemm_mbar(256, 256, 256)
    a, b = torch.randn(256, 256, dtype=torch.float16), torch.randn(256, 256, dtype=torch.float16)
    print((kernel(a, b).float() - (a.float() @ b.float())).abs().max())


if __name__ == "__main__":
    main()
