"""Concurrency bug: split-K GEMM with a fused ReLU. Every split atomically adds its partial product into C, and
the last split then applies the ReLU to C in place - but the other splits' atomic adds may not have landed yet (the
CPU backend runs the splits in order, so the last one always sees the full sum). The activation needs a second
kernel (or a ticket counter)."""
import tilelang
import tilelang.language as T


@tilelang.jit
def splitk_relu(M, N, K, block_M=64, block_N=64, block_K=32, split_k=4, dtype=T.float16, accum_dtype=T.float32):
    k_per_split = K // split_k

    @T.prim_func
    def main(A: T.Tensor((M, K), dtype), B: T.Tensor((K, N), dtype), C: T.Tensor((M, N), accum_dtype)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=128) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            acc = T.alloc_fragment((block_M, block_N), accum_dtype)
            out = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(acc)
            for k in T.Pipelined(k_per_split // block_K, num_stages=2):
                T.copy(A[by * block_M, bz * k_per_split + k * block_K], A_shared)
                T.copy(B[bz * k_per_split + k * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, acc)
            T.atomic_add(C[by * block_M, bx * block_N], acc)
            if bz == split_k - 1:
                T.copy(C[by * block_M, bx * block_N], out)  # bug: the other splits may still be adding into C
                for i, j in T.Parallel(block_M, block_N):
                    out[i, j] = T.max(out[i, j], 0)
                T.copy(out, C[by * block_M, bx * block_N])

    return main


def main():
    import torch
    kernel = splitk_relu(128, 128, 256)
    a, b = torch.randn(128, 256, dtype=torch.float16), torch.randn(256, 128, dtype=torch.float16)
    c = torch.zeros(128, 128)
    kernel(a, b, c)
    print((c - torch.relu(a.float() @ b.float())).abs().max())


if __name__ == "__main__":
    main()
