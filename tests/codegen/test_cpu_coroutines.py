"""CPU numerics of warp-specialised roles that wait on each other (codegen/cpu/coroutines.py, cpu/mbarrier.py):
the roles run as coroutines in the order their mbarriers and named barriers allow, not in program order."""
from __future__ import annotations

import pytest
from test_cpu_backend import build_src

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

HEADER = """
import tilelang
import tilelang.language as T
"""

# the consumer is written before its producer: a 3-stage ring of full/empty barriers over 8 k-steps (parities wrap)
RING = HEADER + """
@T.prim_func
def ring(A: T.Tensor((64, 128), "float16"), B: T.Tensor((128, 32), "float16"), C: T.Tensor((64, 32), "float32")):
    with T.Kernel(1, threads=256) as bx:
        A_s = T.alloc_shared((3, 64, 16), "float16")
        B_s = T.alloc_shared((3, 16, 32), "float16")
        c = T.alloc_fragment((64, 32), "float32")
        full = T.alloc_barrier(arrive_count=[128] * 3)
        empty = T.alloc_barrier(arrive_count=[128] * 3)
        tx = T.get_thread_binding()
        if tx < 128:
            T.clear(c)
            for k in T.serial(8):
                T.barrier_wait(full[k % 3], (k // 3) % 2)
                T.gemm(A_s[k % 3, :, :], B_s[k % 3, :, :], c)
                T.barrier_arrive(empty[k % 3])
            T.copy(c, C)
        else:
            for k in T.serial(8):
                T.barrier_wait(empty[k % 3], ((k // 3) % 2) ^ 1)
                T.copy(A[0, k * 16], A_s[k % 3, :, :])
                T.copy(B[k * 16, 0], B_s[k % 3, :, :])
                T.barrier_arrive(full[k % 3])
"""

# two consumers and a producer: the consumer written first reads the tile S the other one writes, between two
# named barriers; both release each stage (empty counts 256); the producer copies element by element per thread
HANDOFF = HEADER + """
@T.prim_func
def handoff(X: T.Tensor((8, 64, 32), "float32"), C0: T.Tensor((64, 32), "float32"),
            C1: T.Tensor((64, 32), "float32")):
    with T.Kernel(1, threads=384) as bx:
        X_s = T.alloc_shared((2, 64, 32), "float32")
        S = T.alloc_shared((64, 32), "float32")
        acc0 = T.alloc_fragment((64, 32), "float32")
        acc1 = T.alloc_fragment((64, 32), "float32")
        full = T.alloc_barrier(arrive_count=[128] * 2)
        empty = T.alloc_barrier(arrive_count=[256] * 2)
        tx = T.get_thread_binding()
        if tx < 128:
            T.clear(acc1)
            for k in T.serial(8):
                stage = k % 2
                T.barrier_wait(full[stage], (k // 2) % 2)
                T.sync_threads(1, 256)
                for i, j in T.Parallel(64, 32):
                    acc1[i, j] += S[i, j] + X_s[stage, i, j]
                T.sync_threads(2, 256)
                T.barrier_arrive(empty[stage])
            T.copy(acc1, C1)
        elif tx < 256:
            T.clear(acc0)
            for k in T.serial(8):
                T.barrier_wait(full[k % 2], (k // 2) % 2)
                for i, j in T.Parallel(64, 32):
                    S[i, j] = X_s[k % 2, i, j] * (k + 1)
                    acc0[i, j] += X_s[k % 2, i, j]
                T.sync_threads(1, 256)
                T.sync_threads(2, 256)
                T.barrier_arrive(empty[k % 2])
            T.copy(acc0, C0)
        else:
            for k in T.serial(8):
                T.barrier_wait(empty[k % 2], ((k // 2) % 2) ^ 1)
                for r in T.serial(16):
                    e = r * 128 + tx - 256
                    X_s[k % 2, e // 32, e % 32] = X[k, e // 32, e % 32]
                T.barrier_arrive(full[k % 2])
"""

# the producer's 128 threads can never complete a phase that expects 256 arrivals
DEADLOCK = HEADER + """
@T.prim_func
def stuck(A: T.Tensor((64,), "float32"), B: T.Tensor((64,), "float32")):
    with T.Kernel(1, threads=256) as bx:
        buf = T.alloc_shared((64,), "float32")
        ready = T.alloc_barrier(arrive_count=256)
        tx = T.get_thread_binding()
        if tx < 128:
            T.barrier_wait(ready, 0)
            T.copy(buf, B)
        else:
            T.copy(A, buf)
            T.barrier_arrive(ready)
"""

# the kernel the CPU backend used to refuse (a consumer waiting on a producer written after it), now run
LATER_PRODUCER = HEADER + """
@T.prim_func
def k(A: T.Tensor((64, 64), T.float16), B: T.Tensor((64, 64), T.float16), C: T.Tensor((64, 64), T.float32)):
    with T.Kernel(1, threads=256) as bx:
        A_s = T.alloc_shared((64, 64), T.float16)
        B_s = T.alloc_shared((64, 64), T.float16)
        c = T.alloc_fragment((64, 64), T.float32)
        ready = T.alloc_barrier(arrive_count=128)
        if T.get_thread_binding() < 128:
            T.barrier_wait(ready, 0)
            T.gemm(A_s, B_s, c, clear_accum=True)
            T.copy(c, C)
        else:
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.barrier_arrive(ready)
"""


def test_consumer_written_before_its_producer_over_a_multi_stage_ring():
    mod = build_src(RING)
    a, b = torch.randn(64, 128).half(), torch.randn(128, 32).half()
    c = torch.zeros(64, 32)
    mod(a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-4, atol=1e-4)


def test_a_role_waiting_on_a_later_producer_runs_after_it():
    mod = build_src(LATER_PRODUCER)
    a, b = torch.randn(64, 64).half(), torch.randn(64, 64).half()
    c = torch.zeros(64, 64)
    mod(a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-4, atol=1e-4)


def test_two_consumers_hand_a_tile_over_named_barriers_fed_by_a_producer():
    mod = build_src(HANDOFF)
    x = torch.randn(8, 64, 32)
    c0, c1 = torch.zeros(64, 32), torch.zeros(64, 32)
    mod(x, c0, c1)
    weights = torch.arange(2, 10, dtype=torch.float32).view(8, 1, 1)  # S = (k + 1) X_k, plus X_k itself
    torch.testing.assert_close(c0, x.sum(0), rtol=1e-5, atol=1e-4)
    torch.testing.assert_close(c1, (x * weights).sum(0), rtol=1e-5, atol=1e-4)


def test_roles_that_can_never_complete_a_phase_stop_with_a_deadlock_error():
    mod = build_src(DEADLOCK)
    with pytest.raises(Exception, match="deadlock at line 12: this wait on the mbarrier 'ready'"):
        mod(torch.randn(64), torch.zeros(64))


def test_blocks_whose_roles_keep_program_order_get_no_scheduler():
    from tilelang_core.check import check_source
    from tilelang_core.codegen.cpu.build import to_tir

    ws_gemm = HEADER + """
@T.prim_func
def ws(A: T.Tensor((64, 32), "float16"), C: T.Tensor((64, 32), "float32")):
    with T.Kernel(1, threads=256) as bx:
        A_s = T.alloc_shared((64, 32), "float16")
        ready = T.alloc_barrier(arrive_count=128)
        for ko in T.serial(2):
            if T.get_thread_binding() >= 128:
                T.copy(A, A_s)
                T.barrier_arrive(ready)
            else:
                T.barrier_wait(ready, ko % 2)
                T.copy(A_s, C)
"""
    text = to_tir(check_source(ws_gemm, "<t>").kernels[0]).script()
    assert "role_pc" not in text and "ready_state" not in text


# the consumer counts its steps in a while loop over a counter in shared memory
WHILE_RING = RING.replace('''            for k in T.serial(8):
                T.barrier_wait(full[k % 3], (k // 3) % 2)
                T.gemm(A_s[k % 3, :, :], B_s[k % 3, :, :], c)
                T.barrier_arrive(empty[k % 3])''', '''            k = T.alloc_shared((1,), "int32")
            k[0] = 0
            while k[0] < 8:
                T.barrier_wait(full[k[0] % 3], (k[0] // 3) % 2)
                T.gemm(A_s[k[0] % 3, :, :], B_s[k[0] % 3, :, :], c)
                T.barrier_arrive(empty[k[0] % 3])
                k[0] = k[0] + 1''')


def test_a_while_loop_around_the_waits_of_a_role():
    assert WHILE_RING != RING
    mod = build_src(WHILE_RING)
    a, b = torch.randn(64, 128).half(), torch.randn(128, 32).half()
    c = torch.zeros(64, 32)
    mod(a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-4, atol=1e-4)


# the producer only waits for a free stage once the ring has wrapped (a uniform `if` around a wait)
IF_RING = RING.replace('''                T.barrier_wait(empty[k % 3], ((k // 3) % 2) ^ 1)''', '''                if k >= 3:
                    T.barrier_wait(empty[k % 3], ((k // 3) % 2) ^ 1)''')


def test_a_uniform_if_around_a_wait_of_a_role():
    assert IF_RING != RING
    mod = build_src(IF_RING)
    a, b = torch.randn(64, 128).half(), torch.randn(128, 32).half()
    c = torch.zeros(64, 32)
    mod(a, b, c)
    torch.testing.assert_close(c, a.float() @ b.float(), rtol=1e-4, atol=1e-4)
