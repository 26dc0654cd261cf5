"""Row softmax: a block holds block_M whole rows in a fragment, takes the row max, exponentiates and normalises."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def softmax(M, N, block_M=8, threads=128, dtype=T.float16, accum_dtype=T.float32):
    log2e = 1.44269504  # exp(x) == exp2(x * log2(e)); exp2 is the fast instruction

    @T.prim_func
    def row_softmax(
        X: T.Tensor((M, N), dtype),
        Y: T.Tensor((M, N), dtype),
    ):
        with T.Kernel(T.ceildiv(M, block_M), threads=threads) as bx:
            x = T.alloc_fragment((block_M, N), accum_dtype)
            row_max = T.alloc_fragment((block_M,), accum_dtype)
            row_sum = T.alloc_fragment((block_M,), accum_dtype)

            T.copy(X[bx * block_M, 0], x)
            T.reduce_max(x, row_max, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = T.exp2((x[i, j] - row_max[i]) * log2e)
            T.reduce_sum(x, row_sum, dim=1)
            for i, j in T.Parallel(block_M, N):
                x[i, j] = x[i, j] / row_sum[i]
            T.copy(x, Y[bx * block_M, 0])

    return row_softmax


def ref_program(X):
    return torch.softmax(X.float(), dim=-1).to(X.dtype)


def main():
    device = "cuda" if torch.cuda.is_available() else "cpu"
    kernel = softmax(256, 256, 8)
    x = torch.randn(256, 256, device=device, dtype=torch.float16)
    y = kernel(x)
    torch.testing.assert_close(y, ref_program(x), rtol=1e-2, atol=1e-3)
    print("softmax: all checks pass")


if __name__ == "__main__":
    main()
