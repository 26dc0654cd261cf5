"""Mistake: a T.Parallel loop writes F[i] and reads F[(i + 1) % block]; the neighbour's element lives in another
thread's registers, so the value cannot be read directly (real TileLang 0.1.15 stops with an
internal error pointing at the allocation; older versions silently read the local element)."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def rotate_left(N, block=128):
    @T.prim_func
    def main(X: T.Tensor((N,), T.float32), Y: T.Tensor((N,), T.float32)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            F = T.alloc_fragment((block,), T.float32)
            T.copy(X[bx * block], F)
            for i in T.Parallel(block):
                F[i] = F[(i + 1) % block]  # warning: [fragment-index-mismatch]
            T.copy(F, Y[bx * block])

    return main


def main():
    rotate_left(4096)


if __name__ == "__main__":
    main()
