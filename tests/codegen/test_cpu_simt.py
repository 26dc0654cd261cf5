"""CPU numerics of thread-level kernels (thread indices, private locals, barriers, roles) against torch:
the CPU backend runs a block's threads as loops split at barriers (codegen/cpu/simt.py)."""
from __future__ import annotations

import pytest
from test_cpu_backend import build_src

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

HEADER = """
import tilelang
import tilelang.language as T
"""

SPLITK_GEMV = HEADER + """
@T.prim_func
def gemv(A: T.Tensor((256,), "float16"), B: T.Tensor((64, 256), "float16"), C: T.Tensor((64,), "float32")):
    with T.Kernel(64 // 16, threads=(16, 8)) as bn:
        tn = T.get_thread_binding(0)
        tk = T.get_thread_binding(1)
        A_local = T.alloc_local((4,), "float16")
        B_local = T.alloc_local((4,), "float16")
        C_shared = T.alloc_shared((16,), "float32")
        C_accum = T.alloc_local((1,), "float32")
        if tk == 0:
            C_shared[tn] = 0
        T.clear(C_accum)
        T.sync_threads()
        for bk in T.serial(256 // 32):
            for k in T.vectorized(4):
                A_local[k] = A[bk * 32 + tk * 4 + k]
                B_local[k] = B[bn * 16 + tn, bk * 32 + tk * 4 + k]
            for k in T.serial(4):
                C_accum[0] += T.cast(A_local[k], "float32") * T.cast(B_local[k], "float32")
        T.atomic_add(C_shared[tn], C_accum[0])
        T.sync_threads()
        if tk == 0:
            C[bn * 16 + tn] = C_shared[tn]
"""

SCAN = HEADER + """
@T.prim_func
def scan(A: T.Tensor((256,), "float32"), S: T.Tensor((256,), "float32"), Tot: T.Tensor((2,), "float32")):
    with T.Kernel(2, threads=128) as bx:
        tx = T.get_thread_binding()
        buf = T.alloc_shared((128,), "float32")
        tree = T.alloc_shared((128,), "float32")
        buf[tx] = A[bx * 128 + tx]
        tree[tx] = A[bx * 128 + tx]
        T.sync_threads()
        for i in T.serial(7):
            off = 1 << i
            x = T.if_then_else(tx >= off, buf[tx - off], T.float32(0))
            T.sync_threads()
            buf[tx] += x
            half = 64 >> i
            if tx < half:
                tree[tx] += tree[tx + half]
            T.sync_threads()
        S[bx * 128 + tx] = buf[tx]
        if tx == 0:
            Tot[bx] = tree[0]
"""

ROLES = HEADER + """
@T.prim_func
def roles(A: T.Tensor((128,), "float32"), B: T.Tensor((128,), "float32"), C: T.Tensor((2,), "float32")):
    with T.Kernel(2, threads=128) as bx:
        tx = T.get_thread_binding()
        buf = T.alloc_shared((64,), "float32")
        tile = T.alloc_fragment((64,), "float32")
        total = T.alloc_fragment((1,), "float32")
        if tx < 64:
            buf[tx] = A[bx * 64 + tx]
            T.sync_threads(1, 64)
            B[bx * 64 + tx] = buf[63 - tx] * 2
        else:
            T.copy(A[bx * 64:(bx + 1) * 64], tile)
            T.reduce_sum(tile, total, dim=0)
            T.sync_threads(2, 64)
            C[bx] = total[0]
"""

MASK_ROWS = HEADER + """
@T.prim_func
def mask_rows(L: T.Tensor((4, 1000), "float32"), KS: T.Tensor((4,), "int32"), KE: T.Tensor((4,), "int32")):
    with T.Kernel(4, threads=64) as bx:
        tx = T.thread_binding(0, 64, thread="threadIdx.x")
        ks = KS[bx]
        ke = KE[bx]
        for n in T.serial(T.ceildiv(1000, 256)):
            for k in T.serial(256 // 64):
                idx = n * 256 + k * 64 + tx
                if idx < 1000 and (idx < ks or idx >= ke):
                    L[bx, idx] = -T.infinity("float32")
"""

WS_GEMM = HEADER + """
@T.prim_func
def ws_gemm(A: T.Tensor((128, 96), "float16"), B: T.Tensor((96, 64), "float16"), C: T.Tensor((128, 64), "float32")):
    with T.Kernel(2, 2, threads=256) as (bx, by):
        A_shared = T.alloc_shared((64, 32), "float16")
        B_shared = T.alloc_shared((32, 32), "float16")
        C_local = T.alloc_fragment((64, 32), "float32")
        data_is_ready = T.alloc_barrier(arrive_count=128)
        compute_is_done = T.alloc_barrier(arrive_count=128)
        with T.ws(1):
            T.clear(C_local)
        for ko in T.Pipelined(3, num_stages=0):
            with T.ws(0):
                T.barrier_wait(compute_is_done, (ko + 1) % 2)
                T.copy(A[by * 64, ko * 32], A_shared)
                T.copy(B[ko * 32, bx * 32], B_shared)
                T.barrier_arrive(data_is_ready)
            with T.ws(1):
                T.gemm(A_shared, B_shared, C_local)
        with T.ws(1):
            T.copy(C_local, C[by * 64, bx * 32])
"""


def test_warp_specialised_roles_run_their_tile_ops_once():  # the gemm role has no barrier: still once
    mod = build_src(WS_GEMM)
    a, b = torch.randn(128, 96).half(), torch.randn(96, 64).half()
    c = torch.zeros(128, 64)
    mod(a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-3, atol=1e-3)


def test_thread_loop_inside_a_uniform_loop_nest():
    mod = build_src(MASK_ROWS)
    logits = torch.randn(4, 1000)
    ks, ke = torch.tensor([0, 10, 500, 999], dtype=torch.int32), torch.tensor([1000, 20, 900, 1000], dtype=torch.int32)
    want = logits.clone()
    cols = torch.arange(1000)
    want[(cols[None] < ks[:, None]) | (cols[None] >= ke[:, None])] = float("-inf")
    mod(logits, ks, ke)
    torch.testing.assert_close(logits, want)


def test_splitk_gemv_private_locals_and_shared_atomics():
    mod = build_src(SPLITK_GEMV)
    a, b = torch.randn(256).half(), torch.randn(64, 256).half()
    c = torch.zeros(64)
    mod(a, b, c)
    torch.testing.assert_close(c, b.float() @ a.float(), rtol=1e-4, atol=1e-3)


def test_barrier_phases_scan_and_tree_reduction():
    mod = build_src(SCAN)
    a = torch.randn(256)
    s, tot = torch.zeros(256), torch.zeros(2)
    mod(a, s, tot)
    torch.testing.assert_close(s, torch.cumsum(a.view(2, 128), 1).view(-1), rtol=1e-4, atol=1e-4)
    torch.testing.assert_close(tot, a.view(2, 128).sum(1), rtol=1e-4, atol=1e-4)


def test_thread_roles_with_named_barriers_and_tile_ops():
    mod = build_src(ROLES)
    a = torch.randn(128)
    b, c = torch.zeros(128), torch.zeros(2)
    mod(a, b, c)
    torch.testing.assert_close(b, a.view(2, 64).flip(1).reshape(-1) * 2)
    torch.testing.assert_close(c, a.view(2, 64).sum(1), rtol=1e-5, atol=1e-5)


GATHER = HEADER + """
@T.prim_func
def gather(X: T.Tensor((512,), "float32"), Idx: T.Tensor((256,), "int32"), Out: T.Tensor((256,), "float32")):
    with T.Kernel(1, threads=128) as bx:
        tx = T.get_thread_binding()
        pre = T.alloc_fragment((2,), "int32")
        for s in T.unroll(2):
            pre[s] = Idx[s * 128 + tx]
        T.sync_threads()
        for s in T.serial(2):
            Out[s * 128 + tx] = X[pre[s]]
"""


def test_fragment_of_scalar_code_is_held_by_each_thread():  # sparse_mla_fwd_seesaw's prefetched indices
    mod = build_src(GATHER)
    x, idx = torch.randn(512), torch.randperm(512)[:256].int()
    out = torch.zeros(256)
    mod(x, idx, out)
    torch.testing.assert_close(out, x[idx.long()])
