"""CUDA lowering of thread-level programming: thread indices over multi-dimensional blocks, __syncthreads and
named barriers, mbarriers from T.alloc_barrier, register hints, and T.ws roles (serialised, or warp-specialised
when they synchronise through mbarriers)."""
from __future__ import annotations

import pytest
from thread_kernels import HANDOFF, kernel_of

pytestmark = [pytest.mark.tvm]

THREADS = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((64, 256), T.float32), B: T.Tensor((64, 256), T.float32)):
    with T.Kernel(64, threads=(32, 8)) as bx:
        tn = T.get_thread_binding(0)
        tk = T.get_thread_binding(1)
        t = T.thread_binding(0, 32, thread="threadIdx.x")
        t2 = T.thread_binding(8, "threadIdx.y")
        S = T.alloc_shared((256,), T.float32)
        bar = T.alloc_barrier(arrive_count=256)
        bars = T.alloc_barrier([128, 128])
        T.set_max_nreg(240, 1)
        T.no_set_max_nreg()
        T.disable_warp_group_reg_alloc()
        S[tk * 32 + tn] = A[bx, tk * 32 + t]
        T.sync_threads()
        B[bx, t2 * 32 + tn] = S[255 - (tk * 32 + tn)]
        T.barrier_arrive(bar)
        T.barrier_wait(bar, 0)
        if tk < 4:
            S[tn] = 0.0
            T.mbarrier_arrive(bars[0])
            T.mbarrier_wait_parity(bars[0], 0)
        T.sync_threads(1, 128)
        T.mbarrier_arrive(mbarrier=bars[1])
        T.fence_proxy_async()
        T.sync_warp()
"""

ROLES = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((128, 128), T.float16), C: T.Tensor((128, 128), T.float32)):
    with T.Kernel(1, threads=256) as bx:
        S = T.alloc_shared((128, 128), T.float16)
        C_local = T.alloc_fragment((128, 128), T.float32)
        flag = T.alloc_shared((1,), T.int32)
        with T.ws(1):
            T.clear(C_local)
        with T.ws(0):
            T.copy(A, S)
        with T.ws(1):
            T.gemm(S, S, C_local)
            T.copy(C_local, C)
"""

TILE_OP_IN_ROLE = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((128, 128), T.float16), C: T.Tensor((128, 128), T.float32)):
    with T.Kernel(1, threads=256) as bx:
        S = T.alloc_shared((128, 128), T.float16)
        C_local = T.alloc_fragment((128, 128), T.float32)
        ready = T.alloc_barrier(arrive_count=128)
        with T.ws(0):
            T.copy(A, S)
            T.barrier_arrive(ready)
        with T.ws(1):
            T.barrier_wait(ready, 0)
            T.gemm(S, S, C_local, clear_accum=True)
            T.copy(C_local, C)
"""

TILE_OP_OUTSIDE_ROLES = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((128, 128), T.float16), C: T.Tensor((128, 128), T.float16)):
    with T.Kernel(1, threads=256) as bx:
        S = T.alloc_shared((128, 128), T.float16)
        ready = T.alloc_barrier(arrive_count=128)
        T.copy(A, S)
        with T.ws(0):
            T.barrier_arrive(ready)
        with T.ws(1):
            T.barrier_wait(ready, 0)
            T.copy(S, C)
"""

TILE_OP_UNDER_THREAD_IF = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((128, 128), T.float16), B: T.Tensor((128, 128), T.float16)):
    with T.Kernel(1, threads=256) as bx:
        tx = T.get_thread_binding()
        S = T.alloc_shared((128, 128), T.float16)
        if tx < 128:
            T.copy(A, S)
        T.copy(S, B)
"""


@pytest.mark.nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_thread_indices_barriers_and_hints_compile(arch):
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(kernel_of(THREADS), arch)
    script = ck.tvmscript
    assert "T.floormod(tx, 32)" in script and "T.floordiv(tx, 32)" in script  # threadIdx.x / .y of (32, 8)
    for call in ("tl::mbar_init", "tl::mbar_arrive", "tl::mbar_wait", "tl::named_bar_sync", "tl::set_max_nreg<240",
                 "tl::fence_proxy_async()", "tl::sync_warp()"):
        assert call in ck.source
    assert ck.source.count("tl::mbar_init(") == 3  # one call per barrier
    body = ck.source[ck.source.index("if (((int)threadIdx.x) < 128)"):]
    assert "__syncthreads" not in body[:body.index("}")]  # no block barrier inside a thread-dependent if
    assert compile_cubin(ck.source, arch)[:4] == b"\x7fELF"


@pytest.mark.nvcc
def test_roles_without_barriers_run_on_every_thread():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(kernel_of(ROLES), "sm_90a")
    assert "T.floordiv(tx, 128)" not in ck.tvmscript  # serialised: program order orders the roles
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


@pytest.mark.nvcc
def test_scalar_roles_with_barriers_are_guarded():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(kernel_of(HANDOFF), "sm_90a")
    assert "if T.floordiv(tx, 128) == 0:" in ck.tvmscript and "if T.floordiv(tx, 128) == 1:" in ck.tvmscript
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


@pytest.mark.nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_roles_with_barriers_are_warp_specialised(arch):
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(kernel_of(TILE_OP_IN_ROLE), arch)
    script = ck.tvmscript
    role1 = script[script.index("if T.floordiv(tx, 128) == 1:"):]
    assert "(tx - 128)" in role1  # the gemm's accumulator is laid out over the role's 128 threads
    assert "tvm_storage_sync" not in role1 and "fence_sync" not in role1  # the mbarrier orders the roles
    assert "tl::mbar_wait" in role1 and "tl::mbar_arrive" in script
    assert compile_cubin(ck.source, arch)[:4] == b"\x7fELF"


@pytest.mark.nvcc
@pytest.mark.parametrize("src", [TILE_OP_OUTSIDE_ROLES, TILE_OP_UNDER_THREAD_IF], ids=["role-with-barriers", "thread-if"])
def test_tile_ops_outside_and_under_roles_run_on_their_threads(src):
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(kernel_of(src), "sm_90a")
    script = ck.tvmscript
    head = script.index("if T.floordiv(tx, 128) == 0:" if "T.ws" in src else "if (tx < 128):")
    # the block's copy is complete before a role reads it; the role's copy before the block reads it
    assert '\n    T.tvm_storage_sync("shared")' in (script[:head] if "T.ws" in src else script[head:])
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


def test_expect_tx_is_reported_since_no_copy_posts_bytes():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.codegen.cuda.common import LoweringError

    src = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((128,), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        S = T.alloc_shared((128,), T.float32)
        bar = T.alloc_barrier(arrive_count=1)
        T.mbarrier_arrive_expect_tx(bar, 512)
        T.tma_copy(A, S, barrier=bar)
"""
    with pytest.raises(LoweringError) as info:
        generate(kernel_of(src), "sm_90a")
    assert "T.mbarrier_arrive_expect_tx counts the bytes" in str(info.value) and info.value.span.line == 9


@pytest.mark.nvcc
def test_block_index_warp_reductions_and_shuffles_compile():
    from thread_kernels import SHUFFLES

    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    src = generate(kernel_of(SHUFFLES), "sm_90a").source
    for text in ("tl::lanes_allreduce(", "__shfl_xor_sync((uint)4294967295", ", 2, 16)", "blockIdx.x) * 128"):
        assert text in src, text
    assert compile_cubin(src, "sm_90a")[:4] == b"\x7fELF"
