"""Kernels whose tile ops run inside branches on the thread index (warp-specialised roles), for the CUDA role
tests and the CPU-backend numerics of them."""
from __future__ import annotations

# 384 threads: warp group 0 loads A and B into shared memory and arrives on an mbarrier; group 1 multiplies them
# (C = A @ B), group 2 multiplies with B transposed and doubles (D = 2 * A @ B^T) — each gemm on its own 4 warps
ROLE_GEMMS = """
import tilelang.language as T

@T.prim_func
def role_gemms(A: T.Tensor((64, 64), T.float16), B: T.Tensor((64, 64), T.float16), C: T.Tensor((64, 64), T.float32),
               D: T.Tensor((64, 64), T.float32)):
    with T.Kernel(1, threads=384) as bx:
        A_s = T.alloc_shared((64, 64), T.float16)
        B_s = T.alloc_shared((64, 64), T.float16)
        c0 = T.alloc_fragment((64, 64), T.float32)
        c1 = T.alloc_fragment((64, 64), T.float32)
        ready = T.alloc_barrier(arrive_count=128)
        tx = T.get_thread_binding()
        if tx < 128:
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.barrier_arrive(ready)
        elif 128 <= tx < 256:
            T.barrier_wait(ready, 0)
            T.clear(c0)
            T.gemm(A_s, B_s, c0)
            T.copy(c0, C)
        else:
            T.barrier_wait(ready, 0)
            T.fill(c1, 0)
            T.gemm(A_s, B_s, c1, transpose_B=True)
            for i, j in T.Parallel(64, 64):
                c1[i, j] = c1[i, j] * 2
            T.copy(c1, D)
"""

# two roles of 128 threads without mbarriers; each stages through shared memory and synchronises inside itself
# (a named barrier of its warp group), the second from a reduction: O[i] = 2 * A[i], R[i] = max_j A[i, j]
ROLE_SYNC = """
import tilelang.language as T

@T.prim_func
def role_sync(A: T.Tensor((64, 64), T.float32), O: T.Tensor((64, 64), T.float32), R: T.Tensor((64,), T.float32)):
    with T.Kernel(1, threads=256) as bx:
        S0 = T.alloc_shared((64, 64), T.float32)
        S1 = T.alloc_shared((64, 64), T.float32)
        f = T.alloc_fragment((64, 64), T.float32)
        m = T.alloc_fragment((64,), T.float32)
        tx = T.get_thread_binding()
        if T.get_warp_group_idx() == 0:
            T.copy(A, S0)
            for i, j in T.Parallel(64, 64):
                S0[i, j] = S0[i, j] * 2
            T.copy(S0, O)
        if tx >= 128:
            T.copy(A, S1)
            T.copy(S1, f)
            T.reduce_max(f, m, dim=1)
            T.copy(m, R)
"""

# warp group 1 loads a tile with hand-written cp.async and signals completion through the mbarrier
# (cp.async.mbarrier.arrive.noinc); warp group 0 waits and copies it out
CP_ASYNC = """
import tilelang.language as T

@T.prim_func
def cp_async_role(A: T.Tensor((64, 64), T.float16), C: T.Tensor((64, 64), T.float16)):
    with T.Kernel(1, threads=256) as bx:
        A_s = T.alloc_shared((64, 64), T.float16)
        ready = T.alloc_barrier(arrive_count=128)
        tx = T.get_thread_binding()
        if tx >= 128:
            for r in T.serial(4):
                T.ptx_cp_async(T.access_ptr(A_s[r * 16 + (tx - 128) // 8, (tx - 128) % 8 * 8], "w", 8),
                               T.access_ptr(A[r * 16 + (tx - 128) // 8, (tx - 128) % 8 * 8], "r", 8), 8)
            T.cp_async_barrier_noinc(ready)
        else:
            T.barrier_wait(ready, 0)
            T.copy(A_s, C)
"""

# a grid barrier between two passes over a tensor: each block doubles its slice, then reads its neighbour's
GRID_SYNC = """
import tilelang.language as T

@T.prim_func
def grid_sync(A: T.Tensor((33792,), T.float32), B: T.Tensor((33792,), T.float32)):
    with T.Kernel(264, threads=128) as bx:
        for i in T.Parallel(128):
            A[bx * 128 + i] = A[bx * 128 + i] * 2
        T.sync_grid()
        for i in T.Parallel(128):
            B[bx * 128 + i] = A[(bx * 128 + i + 128) % 33792]
"""


def ref_role_gemms(a, b, c, d):
    """C = A @ B, D = 2 * A @ B^T (fp32)."""
    c.copy_(a.float() @ b.float())
    d.copy_(2 * a.float() @ b.float().T)


def ref_role_sync(a, o, r):
    """O = 2 * A, R = the row maxima of A."""
    o.copy_(2 * a)
    r.copy_(a.max(1).values)


def ref_cp_async_role(a, c):
    """C = A."""
    c.copy_(a)


def ref_grid_sync(a, b):
    """A doubled in place; B = A rotated left by one block."""
    a.mul_(2)
    b.copy_(a.roll(-128))
