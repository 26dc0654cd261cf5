"""Mistake: a T.alloc_local buffer (thread-private) is indexed by a T.Parallel variable; use T.alloc_fragment."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def relu(N, block=128):
    @T.prim_func
    def main(X: T.Tensor((N,), T.float32), Y: T.Tensor((N,), T.float32)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            L = T.alloc_local((block,), T.float32)
            for i in T.Parallel(block):
                L[i] = T.max(X[bx * block + i], 0.0)  # error: [local-indexed-by-parallel]
            for i in T.serial(block):
                Y[bx * block + i] = L[i]

    return main


def main():
    relu(4096)


if __name__ == "__main__":
    main()
