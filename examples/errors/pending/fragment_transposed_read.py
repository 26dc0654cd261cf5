"""Mistake: a fragment is read transposed (acc[j, i]) in the T.Parallel loop that writes acc[i, j]; the element
another thread holds is read without staging it through shared memory."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def square_transpose(N, block=64):
    @T.prim_func
    def main(X: T.Tensor((N, N), T.float32), Y: T.Tensor((N, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(N, block), threads=128) as (bx, by):
            acc = T.alloc_fragment((block, block), T.float32)
            out = T.alloc_fragment((block, block), T.float32)
            T.copy(X[by * block, bx * block], acc)
            for k in T.serial(2):
                for i, j in T.Parallel(block, block):
                    out[i, j] = acc[i, j] + acc[j, i]  # error: [fragment-index-mismatch]
            T.copy(out, Y[by * block, bx * block])

    return main


def main():
    square_transpose(256)


if __name__ == "__main__":
    main()
