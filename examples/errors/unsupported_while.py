"""Mistake: a Python `while` loop inside a kernel; loops must be T.serial / T.Pipelined / T.Parallel / range."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def prefix_scale(N, block=128):
    @T.prim_func
    def main(X: T.Tensor((N,), T.float32), Y: T.Tensor((N,), T.float32)):
        with T.Kernel(T.ceildiv(N, block), threads=128) as bx:
            x = T.alloc_fragment((block,), T.float32)
            T.copy(X[bx * block], x)
            k = 0
            while k < 4:  # error: [unsupported-syntax]
                for i in T.Parallel(block):
                    x[i] = x[i] * 0.5
                k += 1
            T.copy(x, Y[bx * block])

    return main


def main():
    prefix_scale(4096)


if __name__ == "__main__":
    main()
