"""Mistake: the T.Parallel extent depends on the block index (a ragged last tile), so the fragment it indexes
has no fixed thread mapping; loop over the whole tile and guard the tail with `if` instead."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def scale_tail(N, block=128):
    @T.prim_func
    def main(X: T.Tensor((N,), T.float32), Y: T.Tensor((N,), T.float32)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            F = T.alloc_fragment((block,), T.float32)
            T.copy(X[bx * block], F)
            for i in T.Parallel(T.min(block, N - bx * block)):
                F[i] = F[i] * 2.0  # error: [fragment-parallel-dynamic]
            T.copy(F, Y[bx * block])

    return main


def main():
    scale_tail(1000)


if __name__ == "__main__":
    main()
