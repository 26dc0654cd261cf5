"""Clean: block-sparse GEMM. `block_mask[by, bx, k]` says whether the (by, k) tile of A times the (k, bx) tile of B
contributes to the (by, bx) tile of C; masked-out products are skipped (the mask comes from a pruning step)."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def blocksparse_matmul(M, N, K, block_M=64, block_N=64, block_K=32, num_stages=2, threads=128, dtype=T.float16,
                       accum_dtype=T.float32):
    mask_shape = (M // block_M, N // block_N, K // block_K)

    @T.prim_func
    def bsgemm(
        A: T.Tensor((M, K), dtype),
        B: T.Tensor((K, N), dtype),
        block_mask: T.Tensor(mask_shape, "bool"),
        C: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=threads) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), dtype)
            B_shared = T.alloc_shared((block_K, block_N), dtype)
            C_local = T.alloc_fragment((block_M, block_N), accum_dtype)
            T.clear(C_local)
            for k in T.Pipelined(K // block_K, num_stages=num_stages):
                if block_mask[by, bx, k]:
                    T.copy(A[by * block_M, k * block_K], A_shared)
                    T.copy(B[k * block_K, bx * block_N], B_shared)
                    T.gemm(A_shared, B_shared, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return bsgemm


def ref_program(A, B, block_mask, block_M=64, block_N=64, block_K=32):
    mask = block_mask.repeat_interleave(block_M, 0).repeat_interleave(block_N, 1)  # (M, N, K // block_K)
    out = torch.zeros(A.shape[0], B.shape[1])
    for k in range(block_mask.shape[2]):
        ks = slice(k * block_K, (k + 1) * block_K)
        out += (A[:, ks].float() @ B[ks, :].float()) * mask[:, :, k]
    return out.to(A.dtype)


def main():
    M, N, K = 256, 256, 256
    kernel = blocksparse_matmul(M, N, K)
    a = torch.randn(M, K, dtype=torch.float16)
    b = torch.randn(K, N, dtype=torch.float16)
    mask = torch.rand(M // 64, N // 64, K // 32) > 0.5
    torch.testing.assert_close(kernel(a, b, mask), ref_program(a, b, mask), rtol=1e-2, atol=1e-2)
    print("blocksparse_gemm: all checks pass")


if __name__ == "__main__":
    main()
