"""Clean: the row-scaling kernel with its cp.async group waited for before each chunk is read (each thread reads
only the elements it copied itself, so no block barrier is needed)."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def scale_rows(M, N, threads=128, dtype=T.float16):
    vec = 8

    @T.prim_func
    def scale(X: T.Tensor((M, N), dtype), s: T.Tensor((M,), dtype), Y: T.Tensor((M, N), dtype)):
        with T.Kernel(M, threads=threads) as row:
            X_shared = T.alloc_shared((threads * vec,), dtype)
            tx = T.get_thread_binding()
            for c in T.serial(N // (threads * vec)):
                T.ptx_cp_async(T.access_ptr(X_shared[tx * vec], "w"),
                               T.access_ptr(X[row, c * threads * vec + tx * vec], "r"), vec)
                T.ptx_commit_group()
                T.ptx_wait_group(0)
                for v in T.serial(vec):
                    Y[row, c * threads * vec + tx * vec + v] = X_shared[tx * vec + v] * s[row]
    return scale


def main():
    import torch
    kernel = scale_rows(64, 2048)
    x, s = torch.randn(64, 2048, dtype=torch.float16), torch.randn(64, dtype=torch.float16)
    print((kernel(x, s) - x * s[:, None]).abs().max())


if __name__ == "__main__":
    main()
