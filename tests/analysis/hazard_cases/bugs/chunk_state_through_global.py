"""Pipeline bug: a chunked linear recurrence that hands each chunk's state to the next through global memory
(S[b, c + 1] = decay * S[b, c] + K_c^T V_c). The loop is T.Pipelined with two stages, so the copy of S[b, c] for
the next chunk is issued while this chunk is still computing the state it is supposed to read. The CPU backend
runs the loop in order and gets it right."""
import tilelang
import tilelang.language as T


@tilelang.jit
def chunk_states(B, L, D, chunk=64, threads=128, dtype=T.float32):
    n_chunks = L // chunk

    @T.prim_func
    def states(K: T.Tensor((B, L, D), dtype), V: T.Tensor((B, L, D), dtype), S: T.Tensor((B, n_chunks + 1, D, D), dtype)):
        with T.Kernel(B, threads=threads) as b:
            S_shared = T.alloc_shared((D, D), dtype)
            K_shared = T.alloc_shared((chunk, D), dtype)
            V_shared = T.alloc_shared((chunk, D), dtype)
            S_new = T.alloc_fragment((D, D), dtype)
            for c in T.Pipelined(n_chunks, num_stages=2):
                T.copy(S[b, c, 0, 0], S_shared)  # bug: prefetched before iteration c - 1 has written S[b, c]
                T.copy(K[b, c * chunk, 0], K_shared)
                T.copy(V[b, c * chunk, 0], V_shared)
                for i, j in T.Parallel(D, D):
                    S_new[i, j] = S_shared[i, j] * 0.9
                T.gemm(K_shared, V_shared, S_new, transpose_A=True)
                T.copy(S_new, S[b, c + 1, 0, 0])

    return states


def main():
    import torch
    kernel = chunk_states(2, 256, 64)
    k, v, s = torch.randn(2, 256, 64), torch.randn(2, 256, 64), torch.zeros(2, 5, 64, 64)
    kernel(k, v, s)
    print(s[:, -1].abs().mean())


if __name__ == "__main__":
    main()
