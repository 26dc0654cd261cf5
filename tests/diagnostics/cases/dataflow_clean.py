"""Patterns the data-flow rules (uninitialized-read, output-not-covered, reduction-axis-step, cross-block-race,
the parameter rules, index-overflow) must not report: running max/sum initialised before the loop, buffers filled
by T.copy or element stores, clear_accum on the first step, ping-pong K tiles, a reversed K loop, guarded tails,
split-K atomics into a passed-in tensor, an elementwise in-place update, symbolic sizes, and the one real bug at
the end of the file."""
import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def online_softmax_rows(M=256, N=512, block_M=64, block_N=128):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
        with T.Kernel(T.ceildiv(M, block_M), threads=128) as bx:
            tile = T.alloc_fragment((block_M, block_N), T.float32)
            m = T.alloc_fragment((block_M,), T.float32)
            m_prev = T.alloc_fragment((block_M,), T.float32)
            s = T.alloc_fragment((block_M,), T.float32)
            part = T.alloc_fragment((block_M,), T.float32)
            T.fill(m, -T.infinity(T.float32))
            T.fill(s, 0)
            for k in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
                T.copy(X[bx * block_M, k * block_N], tile)
                T.copy(m, m_prev)
                T.reduce_max(tile, m, dim=1, clear=False)
                for i, j in T.Parallel(block_M, block_N):
                    tile[i, j] = T.exp2(tile[i, j] - m[i])
                T.reduce_sum(tile, part, dim=1)
                for i in T.Parallel(block_M):
                    s[i] = s[i] * T.exp2(m_prev[i] - m[i]) + part[i]
            T.copy(s, Y[bx * block_M])

    return main


@tilelang.jit(out_idx=[-1])
def gemm_first_step_clears(M=256, N=256, K=256, block_M=64, block_N=64, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=2):
                T.copy(A[by * block_M, k * block_K], A_shared)
                for kk, j in T.Parallel(block_K, block_N):
                    B_shared[kk, j] = B[k * block_K + kk, bx * block_N + j]
                T.gemm(A_shared, B_shared, C_local, clear_accum=k == 0)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1])
def gemm_two_k_halves_per_step(M=256, N=256, K=512, block_M=64, block_N=64, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A0 = T.alloc_shared((block_M, block_K), T.float16)
            A1 = T.alloc_shared((block_M, block_K), T.float16)
            B0 = T.alloc_shared((block_K, block_N), T.float16)
            B1 = T.alloc_shared((block_K, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.Pipelined(K // (2 * block_K), num_stages=1):
                T.copy(A[by * block_M, (2 * k) * block_K], A0)
                T.copy(B[(2 * k) * block_K, bx * block_N], B0)
                T.copy(A[by * block_M, (2 * k + 1) * block_K], A1)
                T.copy(B[(2 * k + 1) * block_K, bx * block_N], B1)
                T.gemm(A0, B0, C_local)
                T.gemm(A1, B1, C_local)
            T.copy(C_local, C[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1])
def gemm_k_backwards_with_tail(M=1000, N=1000, K=256, block_M=64, block_N=64, block_K=32):
    n_k = K // block_K

    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for k in T.serial(n_k):
                T.copy(A[by * block_M, (n_k - 1 - k) * block_K], A_shared)
                T.copy(B[(n_k - 1 - k) * block_K, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            for i, j in T.Parallel(block_M, block_N):
                if by * block_M + i < M and bx * block_N + j < N:
                    C[by * block_M + i, bx * block_N + j] = C_local[i, j]

    return main


@tilelang.jit
def splitk_atomic_into_passed_c(M=256, N=256, K=512, split_k=4, block_M=64, block_N=64, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), T.ceildiv(M, block_M), split_k, threads=128) as (bx, by, bz):
            A_shared = T.alloc_shared((block_M, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, block_N), T.float16)
            C_local = T.alloc_fragment((block_M, block_N), T.float32)
            T.clear(C_local)
            for ko in T.Pipelined(K // split_k // block_K, num_stages=2):
                k0 = bz * (K // split_k) + ko * block_K
                T.copy(A[by * block_M, k0], A_shared)
                T.copy(B[k0, bx * block_N], B_shared)
                T.gemm(A_shared, B_shared, C_local)
            T.atomic_add(C[by * block_M, bx * block_N], C_local)

    return main


@tilelang.jit
def scale_in_place(M=512, N=512, block=128):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            tile = T.alloc_fragment((block, block), T.float32)
            T.copy(X[by * block, bx * block], tile)
            for i, j in T.Parallel(block, block):
                tile[i, j] = tile[i, j] * 2.0
            T.copy(tile, X[by * block, bx * block])
            if bx == 0 and by == 0:
                X[0, 0] = 1.0

    return main


@tilelang.jit(out_idx=[-1])
def symbolic_rows(N=256, block_M=64, block_N=64):
    M = T.dynamic("M")

    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block_N), M // block_M, threads=128) as (bx, by):
            tile = T.alloc_fragment((block_M, block_N), T.float32)
            T.copy(X[by * block_M, bx * block_N], tile)
            T.copy(tile, Y[by * block_M, bx * block_N])

    return main


@tilelang.jit(out_idx=[-1])
def row_sums_local(M=4096, N=64, threads=128):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M,), T.float32)):
        with T.Kernel(T.ceildiv(M, threads), threads=threads) as bx:
            tx = T.get_thread_binding()
            acc = T.alloc_local((1,), T.float32)
            acc[0] = 0.0
            for j in T.serial(N):
                acc[0] += X[bx * threads + tx, j]
            offset = bx * threads * N + tx * N
            if offset >= 0:
                Y[bx * threads + tx] = acc[0]

    return main


@tilelang.jit(out_idx=[-1])
def gemm_never_cleared(M=128, N=128, K=128, block=64, block_K=32):
    @T.prim_func
    def main(A: T.Tensor((M, K), T.float16), B: T.Tensor((K, N), T.float16), C: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(N, block), T.ceildiv(M, block), threads=128) as (bx, by):
            A_shared = T.alloc_shared((block, block_K), T.float16)
            B_shared = T.alloc_shared((block_K, block), T.float16)
            C_local = T.alloc_fragment((block, block), T.float32)
            for k in T.serial(T.ceildiv(K, block_K)):
                T.copy(A[by * block, k * block_K], A_shared)
                T.copy(B[k * block_K, bx * block], B_shared)
                T.gemm(A_shared, B_shared, C_local)  # error: [uninitialized-read]
            T.copy(C_local, C[by * block, bx * block])

    return main


@tilelang.jit
def first_column_of_a_passed_in_tensor(M=256, N=64, block=64):
    @T.prim_func
    def main(X: T.Tensor((M, N), T.float32), Y: T.Tensor((M, N), T.float32)):
        with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
            for i in T.Parallel(block):
                Y[bx * block + i, 0] = X[bx * block + i, 0]

    return main


@tilelang.jit(out_idx=[-1])
def gemv_reducer(M=256, N=512, block_M=128, block_N=128):
    @T.prim_func
    def main(A: T.Tensor((M, N), T.float16), X: T.Tensor((N,), T.float16), O: T.Tensor((M,), T.float32)):
        with T.Kernel(T.ceildiv(M, block_M), threads=256) as bx:
            acc = T.alloc_reducer(block_M, T.float32, replication="all")
            hist = T.alloc_shared((16,), T.int32)
            T.clear(acc)
            for i in T.Parallel(16):
                hist[i] = 0
            for k in T.Pipelined(T.ceildiv(N, block_N), num_stages=2):
                a = T.alloc_fragment((block_M, block_N), T.float16)
                x = T.alloc_fragment((block_N,), T.float16)
                T.copy(A[bx * block_M, k * block_N], a)
                T.copy(X[k * block_N], x)
                for i, j in T.Parallel(block_M, block_N):
                    acc[i] += a[i, j] * x[j]
                for i in T.Parallel(block_M):
                    T.atomic_add(hist[i % 16], 1)
            T.finalize_reducer(acc)
            T.copy(acc, O[bx * block_M])

    return main
