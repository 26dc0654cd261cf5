"""FP8 (e4m3) GEMM with per-tensor scales: C = (A @ B^T) * scale_a * scale_b, fp32 accumulation, bf16 output.

A is M x K and B is N x K (both K-major, as fp8 tensor-core instructions read them); scale_a and scale_b are
float32 tensors of one element (the dequantisation factors of torch._scaled_mm)."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def fp8_matmul(M, N, K, block_M=128, block_N=256, block_K=128, num_stages=3, threads=256,
               in_dtype=T.float8_e4m3fn, out_dtype=T.bfloat16, accum_dtype=T.float32):
    @T.prim_func
    def gemm_fp8(
        A: T.Tensor((M, K), in_dtype),
        B: T.Tensor((N, K), in_dtype),
        scale_a: T.Tensor((1,), T.float32),
        scale_b: T.Tensor((1,), T.float32),
        C: T.Tensor((M, N), out_dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), in_dtype)
            B_shared = T.alloc_shared((block_N, block_K), in_dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)

            T.clear(C_local)
            for ko in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):
                T.copy(A[by * block_M, ko * block_K], A_shared)
                T.copy(B[bx * block_N, ko * block_K], B_shared)
                T.gemm(A_shared, B_shared, C_local, transpose_B=True)

            # Dequantise once per output element, then round to the output type.
            for i, j in T.Parallel(block_M, block_N):
                C_local[i, j] = C_local[i, j] * scale_a[0] * scale_b[0]
            T.copy(C_local, C[by * block_M, bx * block_N])

    return gemm_fp8


def ref_program(A, B, scale_a, scale_b):
    return ((A.float() @ B.float().T) * (scale_a * scale_b)).to(torch.bfloat16)


def quantize(x):
    """(fp8 tensor, float32 scale of one element) with x ~= fp8 * scale, the largest |x| mapped to e4m3's 448."""
    scale = (x.abs().max().float() / 448.0).clamp(min=1e-12).reshape(1)
    return (x / scale).to(torch.float8_e4m3fn), scale


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    M, N, K = 256, 256, 256
    kernel = fp8_matmul(256, 256, 256)
    a, scale_a = quantize(torch.randn(M, K, device=device))
    b, scale_b = quantize(torch.randn(N, K, device=device))
    c = kernel(a, b, scale_a, scale_b)
    torch.testing.assert_close(c, ref_program(a, b, scale_a, scale_b), rtol=1e-2, atol=1e-2)
    print("gemm_fp8: all checks pass")


if __name__ == "__main__":
    main()
