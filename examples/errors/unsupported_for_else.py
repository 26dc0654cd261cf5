"""Mistake: a `for ... else` loop inside a kernel; TileLang kernels have no loop `else` clause."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def halve(N, block=128):
    @T.prim_func
    def main(X: T.Tensor((N,), T.float32), Y: T.Tensor((N,), T.float32)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            x = T.alloc_fragment((block,), T.float32)
            T.copy(X[bx * block], x)
            for k in T.serial(4):  # error: [unsupported-syntax]
                for i in T.Parallel(block):
                    x[i] = x[i] * 0.5
            else:
                T.fill(x, 0.0)
            T.copy(x, Y[bx * block])

    return main


def main():
    halve(4096)


if __name__ == "__main__":
    main()
