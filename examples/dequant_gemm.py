"""Weight-only int8 GEMM: C = A @ (W_q * scale)^T, with W_q dequantised to float16 in shared memory before T.gemm."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def dequant_matmul(M, N, K, block_M=64, block_N=64, block_K=64, num_stages=2, threads=128):
    dtype = T.float16
    storage_dtype = T.int8
    accum_dtype = T.float32

    @T.prim_func
    def dequant_gemm(
        A: T.Tensor((M, K), dtype),
        W_q: T.Tensor((N, K), storage_dtype),
        Scale: T.Tensor((N,), dtype),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            Wq_shared = T.alloc_shared((block_N, block_K), storage_dtype)
            W_shared = T.alloc_shared((block_N, block_K), dtype)
            scale_shared = T.alloc_shared((block_N,), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.copy(Scale[bx * block_N], scale_shared)
            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(W_q[bx * block_N, ko * block_K], Wq_shared)
                # Dequantise: one output channel (row of W) shares one scale.
                for i, j in T.Parallel(block_N, block_K):
                    W_shared[i, j] = T.cast(Wq_shared[i, j], dtype) * scale_shared[i]
                T.gemm(A_shared, W_shared, C_local, transpose_B=True)

            T.copy(C_local, C[by * block_M, bx * block_N])

    return dequant_gemm


def ref_program(A, W_q, Scale):
    w = (W_q.float() * Scale.float()[:, None]).to(A.dtype).float()  # dequantised to float16, as the kernel stores it
    return (A.float() @ w.T).to(A.dtype)


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    kernel = dequant_matmul(128, 256, 256, 64, 64, 64)
    a = torch.randn(128, 256, device=device, dtype=torch.float16)
    w_q = torch.randint(-127, 128, (256, 256), device=device, dtype=torch.int8)
    scale = (torch.rand(256, device=device, dtype=torch.float16) + 0.5) / 127
    c = kernel(a, w_q, scale)
    torch.testing.assert_close(c, ref_program(a, w_q, scale), rtol=1e-2, atol=1e-2)
    print("dequant_gemm: all checks pass")


if __name__ == "__main__":
    main()
