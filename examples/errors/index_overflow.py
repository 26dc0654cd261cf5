"""Silent bug: int4 weights are unpacked through a flat bit offset, `bit = (row * K + col) * 4`, bound to a scalar
in int32. For a 32768 x 32768 weight it reaches 4,294,967,292 and wraps around, so the lower half of the matrix
reads the wrong bytes (TileLang widens a buffer index whose bound overflows, but not a scalar computed first)."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def unpack_int4(N, K, block_N=32, block_K=256):
    @T.prim_func
    def main(Q: T.Tensor((N, K // 2), T.uint8), W: T.Tensor((N, K), T.float16)):
        with T.Kernel(T.ceildiv(K, block_K), T.ceildiv(N, block_N), threads=128) as (bx, by):
            for i, j in T.Parallel(block_N, block_K):
                bit = ((by * block_N + i) * K + bx * block_K + j) * 4  # error: [index-overflow]
                byte = bit // 8
                W[by * block_N + i, bx * block_K + j] = T.cast(
                    (Q[byte // (K // 2), byte % (K // 2)] >> (bit % 8)) & 15, T.float16)

    return main


def main():
    unpack_int4(32768, 32768)


if __name__ == "__main__":
    main()
