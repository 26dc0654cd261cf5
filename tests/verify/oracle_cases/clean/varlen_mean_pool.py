"""Clean: mean pooling over packed variable-length sequences. The tokens of all sequences are packed into one
(total, dim) tensor and `cu_seqlens` holds each sequence's start (cumulative lengths, batch + 1 entries); one block
pools one sequence over one block_D slice of the features."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def varlen_mean_pool(batch, total, dim, block_D=64, threads=64, dtype=T.float16, accum_dtype=T.float32):
    @T.prim_func
    def pool(
        X: T.Tensor((total, dim), dtype),
        cu_seqlens: T.Tensor((batch + 1,), T.int32),
        Out: T.Tensor((batch, dim), accum_dtype),
    ):
        with T.Kernel(T.ceildiv(dim, block_D), batch, threads=threads) as (bx, by):
            acc = T.alloc_fragment((block_D,), accum_dtype)
            start = cu_seqlens[by]
            length = cu_seqlens[by + 1] - start
            T.clear(acc)
            for t in T.serial(length):
                for d in T.Parallel(block_D):
                    acc[d] += X[start + t, bx * block_D + d]
            for d in T.Parallel(block_D):
                Out[by, bx * block_D + d] = acc[d] / T.max(length, 1)

    return pool


def ref_program(X, cu_seqlens):
    rows = []
    for b in range(cu_seqlens.numel() - 1):
        s, e = int(cu_seqlens[b]), int(cu_seqlens[b + 1])
        seg = X[s:e].float()
        rows.append(seg.sum(0) / max(e - s, 1))
    return torch.stack(rows)


def main():
    lengths = torch.tensor([5, 17, 1, 41])
    cu = torch.zeros(5, dtype=torch.int32)
    cu[1:] = torch.cumsum(lengths, 0)
    x = torch.randn(64, 128, dtype=torch.float16)
    kernel = varlen_mean_pool(4, 64, 128)
    torch.testing.assert_close(kernel(x, cu), ref_program(x, cu), rtol=1e-3, atol=1e-3)
    print("varlen_mean_pool: all checks pass")


if __name__ == "__main__":
    main()
