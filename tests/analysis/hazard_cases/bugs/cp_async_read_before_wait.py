"""Async-copy bug: a row-scaling kernel stages each row chunk with hand-written cp.async copies, commits the group
and then reads the shared chunk straight away - the T.ptx_wait_group(0) was left out. The CPU backend completes
each cp.async when its statement ends, so the data is always there."""
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
                for v in T.serial(vec):
                    Y[row, c * threads * vec + tx * vec + v] = X_shared[tx * vec + v] * s[row]  # bug: no wait
    return scale


def main():
    import torch
    kernel = scale_rows(64, 2048)
    x, s = torch.randn(64, 2048, dtype=torch.float16), torch.randn(64, dtype=torch.float16)
    print((kernel(x, s) - x * s[:, None]).abs().max())


if __name__ == "__main__":
    main()
