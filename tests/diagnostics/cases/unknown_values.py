"""Arguments the checker cannot work out (values from a library call, tile sizes from an autotuner config) are no
errors: it stays silent and the JIT, which knows them, decides. Known wrong values are still reported. Cluster
barriers are barriers, and an eager function that opens `T.ClusterKernel` is checked like one opening `T.Kernel`."""
import tilelang
import tilelang.language as T
from some_quant_library import get_intrin_info

INFO = get_intrin_info(out_dtype="bfloat16")
SOURCE = INFO["c_source"]
FUNC_NAME = INFO["func_name"]


@tilelang.jit
def extern_dequant(B, block_N=64, threads=64):
    N = T.const("N")
    B: T.Tensor((N,), T.uint8)
    C = T.empty((N * 2,), T.bfloat16)
    with T.Kernel(T.ceildiv(N, block_N), threads=threads) as bx:
        T.import_source(SOURCE)
        packed = T.alloc_local((1,), T.uint8)
        out = T.alloc_local((2,), T.bfloat16)
        tx = T.get_thread_binding()
        packed[0] = B[bx * block_N + tx]
        T.call_extern(FUNC_NAME, T.access_ptr(packed, "r"), T.access_ptr(out, "w"), 1, dtype=T.bfloat16)
        for v in T.serial(2):
            C[(bx * block_N + tx) * 2 + v] = out[v]
    return C


@tilelang.jit
def extern_known_wrong(B, block_N=64):
    N = T.const("N")
    B: T.Tensor((N,), T.uint8)
    with T.Kernel(T.ceildiv(N, block_N), threads=block_N) as bx:
        T.import_source(42)  # error: [bad-arguments]
        T.call_extern("not a name!", bx, dtype=T.int32)  # error: [bad-arguments]


@tilelang.jit
def conv_tuned(data, weight, S=1, D=1, P=1, config=get_intrin_info()):
    N, C, H, W, F, K = T.const("N, C, H, W, F, K")
    block_M, block_N, block_K = config["block_M"], config["block_N"], config["block_K"]
    OH = (H + 2 * P - D * (K - 1) - 1) // S + 1
    OW = (W + 2 * P - D * (K - 1) - 1) // S + 1
    data: T.Tensor((N, H, W, C), T.float16)
    weight: T.Tensor((K * K * C, F), T.float16)
    out = T.empty((N * OH * OW, F), T.float16)
    with T.Kernel(T.ceildiv(F, block_N), T.ceildiv(N * OH * OW, block_M), threads=128) as (bx, by):
        data_s = T.alloc_shared((block_M, block_K), T.float16)
        weight_s = T.alloc_shared((block_K, block_N), T.float16)
        acc = T.alloc_fragment((block_M, block_N), T.float32)
        T.clear(acc)
        for k_iter in T.Pipelined(T.ceildiv(K * K * C, block_K), num_stages=2):
            T.im2col(data, data_s, by, k_iter, K, S, D, P)
            T.copy(weight[k_iter * block_K, bx * block_N], weight_s)
            T.gemm(data_s, weight_s, acc)
        T.copy(acc, out[by * block_M, bx * block_N])
    return out


@tilelang.jit
def cluster_pipeline(A, block_M=64, num_stages=2):
    M = T.const("M")
    A: T.Tensor((M,), T.float32)
    B = T.empty((M,), T.float32)
    with T.ClusterKernel(T.ceildiv(M, block_M), threads=block_M, cluster_dims=2) as bx:
        full = T.alloc_cluster_barrier([block_M] * num_stages)
        done = T.alloc_cluster_barrier([1])
        tx = T.get_thread_binding()
        for it in T.unroll(num_stages):
            T.mbarrier_arrive(full[it])
            T.mbarrier_wait_parity(full[it], 0)
            if A[bx * block_M + tx] < 0:
                break
            B[bx * block_M + tx] = A[bx * block_M + tx]
        if tx == 0:
            T.mbarrier_arrive(done)
        T.mbarrier_wait_parity(done, 0)
        stray = T.alloc_shared((1,), T.uint64)
        T.mbarrier_arrive(stray[0])  # error: [bad-arguments]
        for v in T.vectorized(4):
            if v > 2:
                break  # error: [unsupported-syntax]
    return B
