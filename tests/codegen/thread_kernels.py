"""Kernels for the thread-level and intrinsic CUDA tests (also built for the H200 check in
benchmarks/gpu_threads.py): each a source string plus the torch reference of its outputs."""
from __future__ import annotations

import textwrap


def kernel_of(src: str):
    """The one kernel instance of a source string, checked without errors."""
    from tilelang_core import check_source

    res = check_source(textwrap.dedent(src), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]

# B[b, t] = A[b, 255 - t] through shared memory with threads=(32, 8); all threads meet at an mbarrier
REVERSE = """
import tilelang.language as T

@T.prim_func
def reverse(A: T.Tensor((64, 256), T.float32), B: T.Tensor((64, 256), T.float32)):
    with T.Kernel(64, threads=(32, 8)) as bx:
        tn = T.get_thread_binding(0)
        tk = T.get_thread_binding(1)
        S = T.alloc_shared((256,), T.float32)
        bar = T.alloc_barrier(arrive_count=256)
        S[tk * 32 + tn] = A[bx, tk * 32 + tn]
        T.sync_threads()
        B[bx, tk * 32 + tn] = S[255 - (tk * 32 + tn)]
        T.barrier_arrive(bar)
        T.barrier_wait(bar, 0)
        T.sync_threads(1, 256)
"""

# warp group 0 publishes a value through shared memory and an mbarrier; warp group 1 waits and stores it
HANDOFF = """
import tilelang.language as T

@T.prim_func
def handoff(A: T.Tensor((256,), T.int32)):
    with T.Kernel(1, threads=256) as bx:
        tx = T.get_thread_binding()
        S = T.alloc_shared((1,), T.int32)
        ready = T.alloc_barrier(arrive_count=128)
        with T.ws(0):
            if tx == 0:
                S[0] = 7
            T.barrier_arrive(ready)
        with T.ws(1):
            T.barrier_wait(ready, 0)
            A[tx] = S[0]
"""

# row sums and maxima through reducers, IEEE intrinsics, 4- and 2-wide vector atomics
REDUCERS = """
import tilelang.language as T

@T.prim_func
def reducers(A: T.Tensor((128, 64), T.float32), X: T.Tensor((64,), T.float32), O: T.Tensor((128,), T.float32),
             D: T.Tensor((128, 64), T.float32), H: T.Tensor((128, 64), T.float16)):
    with T.Kernel(1, threads=128) as bx:
        red = T.alloc_reducer((128,), T.float32, replication="all")
        mx = T.alloc_reducer((128,), T.float32, op="max", replication="all")
        a_frag = T.alloc_fragment((128, 64), T.float32)
        S = T.alloc_shared((128, 64), T.float32)
        SH = T.alloc_shared((128, 64), T.float16)
        T.copy(A, a_frag)
        T.copy(A, S)
        T.copy(H, SH)
        T.clear(red)
        T.fill(mx, -T.infinity(T.float32))
        for i, j in T.Parallel(128, 64):
            red[i] += a_frag[i, j] * X[j]
            mx[i] = T.max(mx[i], a_frag[i, j])
        T.finalize_reducer(red)
        T.finalize_reducer(mx)
        for i in T.Parallel(128):
            O[i] = T.ieee_add(red[i], mx[i], "rz") + T.ieee_fmaf(red[i], 2.0, 1.0) + T.ieee_fdiv(red[i], 4.0, "ru")
        for i, j in T.Parallel(128, 16):
            T.atomic_addx4(D[i, j * 4], S[i, j * 4])
        for i, j in T.Parallel(128, 32):
            T.atomic_addx2(H[i, j * 2], SH[i, j * 2])
"""

# prefix sums along rows (into D), down columns in reverse (in place), and over half of a replicated fragment
SCANS = """
import tilelang.language as T

@T.prim_func
def scans(A: T.Tensor((4, 64), T.float32), B: T.Tensor((4, 64), T.float32), C: T.Tensor((64,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((4, 64), T.float32)
        D = T.alloc_shared((4, 64), T.float32)
        R = T.alloc_fragment((64,), T.float32)
        T.copy(A, S)
        T.cumsum(S, D, dim=1)
        T.cumsum(S, dim=0, reverse=True)
        for i, j in T.Parallel(4, 64):
            B[i, j] = D[i, j] + S[i, j]
        T.copy(A[1, :], R)
        T.cumsum(R[0:32], dim=0)
        T.copy(R, C)
"""


def ref_reverse(A, B):
    B.copy_(A.flip(1))


def ref_handoff(A):
    A[128:] = 7


def ref_reducers(A, X, O, D, H):
    red, mx = A @ X, A.max(dim=1).values
    O.copy_(red + mx + (red * 2 + 1) + red / 4)
    D.add_(A)
    H.add_(H.clone())


def ref_scans(A, B, C):
    B.copy_(A.cumsum(1) + A.flip(0).cumsum(0).flip(0))
    C.copy_(A[1])
    C[:32] = A[1, :32].cumsum(0)

# T.print of a message, a scalar, a shared tile, a distributed fragment and a local buffer
PRINTS = """
import tilelang.language as T

@T.prim_func
def prints(A: T.Tensor((16, 16), T.float16)):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((16, 16), T.float16)
        F = T.alloc_fragment((16, 16), T.float32)
        L = T.alloc_local((2,), T.int32)
        T.copy(A, S)
        T.copy(S, F)
        L[0] = 1
        L[1] = 2
        T.print(msg="hello \\"there\\"")
        T.print(bx, "block")
        T.print(S)
        T.print(F, msg="frag", warp_id=1)
        T.print(L)
"""

# a per-thread histogram: scalar atomics under an `if` on the thread index
HISTOGRAM = """
import tilelang.language as T

@T.prim_func
def histogram(A: T.Tensor((1024,), T.int32), H: T.Tensor((16,), T.int32)):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        S = T.alloc_shared((16,), T.int32)
        T.fill(S, 0)
        for j in T.serial(8):
            idx = tx * 8 + j
            if idx < 1000:
                T.atomic_add(S[A[idx] % 16], 1)
        T.copy(S, H)
"""


def ref_histogram(A, H):
    H.copy_(((A[:1000] % 16).bincount(minlength=16)).to(H.dtype))

# T.transpose of a shared tile and of a slice of a 3-D tile
TRANSPOSE = """
import tilelang.language as T

@T.prim_func
def transpose(A: T.Tensor((2, 32, 64), T.float32), B: T.Tensor((64, 32), T.float32),
              C: T.Tensor((2, 64, 32), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((2, 32, 64), T.float32)
        D = T.alloc_shared((64, 32), T.float32)
        E = T.alloc_shared((2, 64, 32), T.float32)
        T.copy(A, S)
        T.transpose(S[1, :, :], D)
        T.transpose(S, E)
        T.copy(D, B)
        T.copy(E, C)
"""


def ref_transpose(A, B, C):
    B.copy_(A[1].T)
    C.copy_(A.transpose(1, 2))

# warp specialisation: warp group 0 loads A/B tiles (T.tma_copy), warp group 1 runs the gemm; two mbarriers
# hand each K step over (the example_warp_specialize_gemm_copy_0_gemm_1 pattern)
WS_GEMM = """
import tilelang.language as T

@T.prim_func
def ws_gemm(A: T.Tensor((256, 512), T.float16), B: T.Tensor((512, 256), T.float16), C: T.Tensor((256, 256), T.float32)):
    with T.Kernel(2, 2, threads=256) as (bx, by):
        A_shared = T.alloc_shared((128, 64), T.float16)
        B_shared = T.alloc_shared((64, 128), T.float16)
        C_local = T.alloc_fragment((128, 128), T.float32)
        data_is_ready = T.alloc_barrier(arrive_count=128)
        compute_is_done = T.alloc_barrier(arrive_count=128)
        with T.ws(1):
            T.clear(C_local)
        for ko in T.Pipelined(8, num_stages=2):
            with T.ws(0):
                T.barrier_wait(compute_is_done, (ko + 1) % 2)
                T.tma_copy(A[by * 128, ko * 64], A_shared, barrier=data_is_ready)
                T.tma_copy(B[ko * 64, bx * 128], B_shared, barrier=data_is_ready)
                T.barrier_arrive(data_is_ready)
            with T.ws(1):
                T.barrier_wait(data_is_ready, ko % 2)
                T.gemm(A_shared, B_shared, C_local)
                T.barrier_arrive(compute_is_done)
        with T.ws(1):
            T.copy(C_local, C[by * 128, bx * 128])
"""


def ref_ws_gemm(A, B, C):
    C.copy_(A.float() @ B.float())

# the gemv_alloc_reducer pattern of the real examples: a replicated reducer updated in a pipelined loop
GEMV_REDUCER = """
import tilelang.language as T

@T.prim_func
def gemv_reducer(a: T.Tensor((1024, 1024), T.float16), x: T.Tensor((1024,), T.float16),
                 o: T.Tensor((1024,), T.float16)):
    with T.Kernel(8, threads=256) as i0_m:
        o_reducer = T.alloc_reducer(128, T.float32, replication="all")
        T.clear(o_reducer)
        for i0_n in T.Pipelined(8, num_stages=2):
            a_smem = T.alloc_shared((128, 128), T.float16)
            T.copy(a[i0_m * 128, i0_n * 128], a_smem)
            a_frag = T.alloc_fragment((128, 128), T.float16)
            T.copy(a_smem, a_frag)
            x_frag = T.alloc_fragment(128, T.float16)
            T.copy(x[i0_n * 128], x_frag)
            for i1_m, i1_n in T.Parallel(128, 128):
                o_reducer[i1_m] += a_frag[i1_m, i1_n] * x_frag[i1_n]
        T.finalize_reducer(o_reducer)
        T.copy(o_reducer, o[i0_m * 128])
"""


def ref_gemv_reducer(a, x, o):
    o.copy_((a.float() @ x.float()).half())


def ref_prints(A):
    pass

# block indices, warp reductions and shuffles
SHUFFLES = """
import tilelang.language as T

@T.prim_func
def shuffles(A: T.Tensor((4, 128), T.float32), B: T.Tensor((4, 128), T.float32)):
    with T.Kernel(4, threads=128) as bx:
        by = T.get_block_binding(0)
        tx = T.get_thread_binding()
        v = A[by, tx]
        B[by, tx] = T.warp_reduce_sum(v) + T.warp_reduce_max(v) + T.shfl_xor(v, 1) + T.shfl_down(v, 2, width=16)
"""


def ref_shuffles(A, B):
    import torch

    lanes = torch.arange(128, device=A.device)
    warps = A.view(4, 4, 32)
    total = warps.sum(-1, keepdim=True).expand(-1, -1, 32) + warps.max(-1, keepdim=True).values.expand(-1, -1, 32)
    down = torch.where(lanes % 16 < 14, lanes + 2, lanes)
    B.copy_(total.reshape(4, 128) + A[:, lanes ^ 1] + A[:, down])

# compaction: each thread claims a slot with T.atomic_add(..., return_prev=True)
COMPACT = """
import tilelang.language as T

@T.prim_func
def compact(A: T.Tensor((256,), T.int32), Out: T.Tensor((256,), T.int32), Count: T.Tensor((1,), T.int32)):
    with T.Kernel(1, threads=256) as bx:
        tx = T.get_thread_binding()
        n = T.alloc_shared((1,), T.int32)
        pos = T.alloc_var(T.int32)
        T.fill(n, 0)
        if A[tx] % 2 == 0:
            pos = T.atomic_add(n[0], 1, return_prev=True)
            Out[pos] = A[tx]
        T.sync_threads()
        if tx == 0:
            Count[0] = n[0]
"""
