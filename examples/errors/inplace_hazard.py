"""Silent bug: X = X @ W computed in place. Block (bx, by) overwrites its 64x64 tile of X, while the blocks of
the same row band still read all of that band's columns of X as the left operand: whether they see the old or the
new values depends on the order the blocks run in (write into a separate output instead)."""
import torch

import tilelang
import tilelang.language as T


@tilelang.jit
def matmul_inplace(M, N, block=64, block_K=32):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float16), W: T.Tensor((N, N), T.float16)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            X_shared = T.alloc_shared((block, block_K), T.float16)
            W_shared = T.alloc_shared((block_K, block), T.float16)
            acc = T.alloc_fragment((block, block), T.float32)
            T.clear(acc)
            for k in T.Pipelined(T.ceildiv(N, block_K), num_stages=2):
                T.copy(X[by * block, k * block_K], X_shared)
                T.copy(W[k * block_K, bx * block], W_shared)
                T.gemm(X_shared, W_shared, acc)
            T.copy(acc, X[by * block, bx * block])  # warning: [inplace-hazard]

    return main


def main():
    x = torch.randn(128, 256, dtype=torch.float16)
    w = torch.randn(256, 256, dtype=torch.float16) / 16
    expected = x.float() @ w.float()
    matmul_inplace(128, 256)(x, w)
    print("max error:", (x.float() - expected).abs().max().item())


if __name__ == "__main__":
    main()
