"""Tile ops inside branches on the thread index (warp-specialised roles): each runs on the threads its branch
selects — copies stride over them, gemms split over their warps, fragments are laid out for them, barriers are
named barriers of the role — on CUDA (lowered and compiled with nvcc) and on the CPU backend (numerics); and
T.sync_grid (a cooperative launch on CUDA, a phase split on the CPU)."""
from __future__ import annotations

import re

import pytest
from role_kernels import CP_ASYNC, GRID_SYNC, ROLE_GEMMS, ROLE_SYNC
from thread_kernels import kernel_of

pytestmark = [pytest.mark.tvm]


def _generate(src: str, arch: str):
    from tilelang_core.codegen.cuda import generate

    return generate(kernel_of(src), arch)


def _compiles(ck, arch: str) -> bool:
    from tilelang_core.runtime.artifact import compile_cubin

    return compile_cubin(ck.source, arch)[:4] == b"\x7fELF"


def _branch(script: str, head: str, tail: str | None = None) -> str:
    body = script[script.index(head):]
    return body[:body.index(tail)] if tail else body


def test_thread_ranges_of_branches():
    from tilelang_core.passes.roles import Roles

    src = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((512,), T.float32)):
    with T.Kernel(1, threads=512) as bx:
        tx = T.get_thread_binding()
        wg = tx // 128
        if tx < 128:
            A[tx] = 0.0
        elif 128 <= tx < 256:
            A[tx] = 1.0
        elif wg == 2:
            A[tx] = 2.0
        else:
            if T.get_warp_idx() >= 15:
                A[tx] = 3.0
        if tx < 100:
            A[tx] = 4.0
"""
    func = kernel_of(src)
    roles = Roles(func, 512)
    assert sorted(roles.branches.values()) == [((0, 128), (128, 384)), ((128, 128), (256, 256)),
                                               ((256, 128), (384, 128)), ((480, 32), None)]
    assert roles.interval(next(s.cond for s in _ifs(func) if roles.branches.get(id(s)) is None)) == (0, 100)


def _ifs(func):
    from tilelang_core.ir import nodes as N
    from tilelang_core.ir.visitor import walk

    return [n for n in walk(func.body) if isinstance(n, N.If)]


@pytest.mark.nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_each_role_runs_its_tile_ops_on_its_own_warps(arch):
    ck = _generate(ROLE_GEMMS, arch)
    script = ck.tvmscript
    warps = "4x1" if arch == "sm_90a" else "2x2"  # each gemm over its role's 4 warps, not the block's 12
    assert ck.layouts_text.count(f"64x64 warps {warps}") == 2
    producer = _branch(script, "if (tx < 128):", "\n    else:")
    assert "(it * 128 + tx)" in producer and "tl::mbar_arrive" in producer  # the copy strides over 128 threads
    consumer = _branch(script, "if T.And((128 <= tx), (tx < 256)):")
    assert "(tx - 128)" in consumer and "(tx - 256)" in consumer  # fragment coordinates relative to each role
    assert "tvm_storage_sync" not in consumer and "fence_sync" not in consumer  # no block barrier inside roles
    if arch == "sm_90a":
        assert "tl_gemm_wgmma" in script and "/ 128 % 1, 0);" in ck.source
        # the producer's generic-proxy writes become visible to wgmma's async proxy after the wait
        assert re.search(r"tl::mbar_wait\(.*, 0, 1\);", ck.source)
    assert _compiles(ck, arch)


@pytest.mark.nvcc
def test_barriers_inside_a_role_are_named_barriers_of_its_threads():
    ck = _generate(ROLE_SYNC, "sm_90a")
    script = ck.tvmscript
    first = _branch(script, "if (T.floordiv(tx, 128) == 0):", "if (tx >= 128):")
    second = _branch(script, "if (tx >= 128):")
    assert 'tl::named_bar_sync", 1, 128' in first and 'tl::named_bar_sync", 2, 128' in second
    assert "tvm_storage_sync" not in second
    assert "# f: generic 64x64 over 128 threads" in ck.layouts_text
    assert _compiles(ck, "sm_90a")


@pytest.mark.nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90a"])
def test_hand_written_cp_async_arrives_on_the_mbarrier(arch):
    ck = _generate(CP_ASYNC, arch)
    assert "tl::cp_async<16>(" in ck.source and "cp.async.mbarrier.arrive.noinc.shared.b64" in ck.source
    assert _compiles(ck, arch)


WIDE_ROLE = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((128, 64), T.float16), B: T.Tensor((64, 64), T.float16), C: T.Tensor((128, 64), T.float32)):
    with T.Kernel(1, threads=384) as bx:
        A_s = T.alloc_shared((128, 64), T.float16)
        B_s = T.alloc_shared((64, 64), T.float16)
        acc = T.alloc_fragment((128, 64), T.float32)
        tx = T.get_thread_binding()
        if tx >= 128:
            T.copy(A, A_s)
            T.copy(B, B_s)
            T.gemm(A_s, B_s, acc, clear_accum=True)
            T.copy(acc, C)
"""


@pytest.mark.nvcc
def test_a_wgmma_gemm_in_a_role_of_two_warp_groups_numbers_them_from_the_role():
    ck = _generate(WIDE_ROLE, "sm_90a")
    assert "const int wg = __shfl_sync(0xffffffffu, (threadIdx.x - 128) / 128 % 2, 0);" in ck.source
    assert "# acc: wgmma.m64n64 128x64 warps 8x1" in ck.layouts_text
    assert _compiles(ck, "sm_90a")


PARTIAL_WARPS = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((128, 128), T.float16), B: T.Tensor((128, 128), T.float16)):
    with T.Kernel(1, threads=256) as bx:
        S = T.alloc_shared((128, 128), T.float16)
        if T.get_thread_binding() < 100:
            T.copy(A, S)
        T.copy(S, B)
"""


@pytest.mark.parametrize("src, line, words", [
    (WIDE_ROLE, 14, "an mma.sync gemm needs its role to start at a multiple of its thread count"),
    (PARTIAL_WARPS, 9, "does not select whole warps"),
], ids=["mma-role-offset", "partial-warps"])
def test_roles_the_lowering_cannot_serve_are_reported_at_the_tile_op(src, line, words):
    from tilelang_core.codegen.cuda.common import LoweringError

    with pytest.raises(LoweringError) as info:
        _generate(src, "sm_80")
    assert words in str(info.value) and info.value.span.line == line


def test_role_kernels_compute_on_the_cpu_backend():
    torch = pytest.importorskip("torch")
    from test_cpu_backend import build_src

    a, b = torch.randn(64, 64).half(), torch.randn(64, 64).half()
    c, d = torch.zeros(64, 64), torch.zeros(64, 64)
    build_src(ROLE_GEMMS)(a, b, c, d)  # the roles run one after another, in program order
    ref = a.float() @ b.float()
    assert torch.allclose(c, ref, atol=1e-3) and torch.allclose(d, 2 * a.float() @ b.float().T, atol=1e-3)
    x, o, r = torch.randn(64, 64), torch.zeros(64, 64), torch.zeros(64)
    build_src(ROLE_SYNC)(x, o, r)
    assert torch.equal(o, 2 * x) and torch.equal(r, x.max(1).values)


@pytest.mark.nvcc
def test_a_grid_barrier_makes_a_cooperative_artifact():
    from tilelang_core.runtime.artifact import build_artifact

    art = build_artifact(kernel_of(GRID_SYNC), "sm_90a", cache=False)
    assert "cooperative_groups::this_grid().sync()" in art.source and "tl::sync_grid();" in art.source
    assert art.cooperative and art.launch_plan()[0]["cooperative"]
    assert not build_artifact(kernel_of(CP_ASYNC), "sm_90a", cache=False).launch_plan()[0].get("cooperative")


def test_a_grid_barrier_splits_the_blocks_into_phases_on_the_cpu_backend():
    torch = pytest.importorskip("torch")
    from test_cpu_backend import build_src

    a = torch.randn(33792)
    b, a0 = torch.zeros(33792), a.clone()
    build_src(GRID_SYNC)(a, b)  # block 0's second phase reads what block 1 wrote in the first
    assert torch.equal(a, 2 * a0) and torch.equal(b, (2 * a0).roll(-128))


def test_block_storage_carried_over_a_grid_barrier_is_refused_on_the_cpu_backend():
    from tilelang_core.check import check_source
    from tilelang_core.codegen import cpu
    from tilelang_core.diagnostics import CompileError

    src = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((256,), T.float32)):
    with T.Kernel(2, threads=128) as bx:
        S = T.alloc_shared((128,), T.float32)
        T.copy(A[bx * 128], S)
        T.sync_grid()
        T.copy(S, A[(1 - bx) * 128])
"""
    with pytest.raises(CompileError) as info:
        cpu.build(check_source(src, "<t>").kernels[0])
    (d,) = info.value.diagnostics
    assert "'S' is written before T.sync_grid and read after it" in d.message and d.span.line == 10


def test_tile_ops_of_roles_inside_a_loop_run_once_per_iteration_on_the_cpu_backend():
    torch = pytest.importorskip("torch")
    from test_cpu_backend import build_src

    src = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((64, 128), T.float16), B: T.Tensor((128, 64), T.float16), C: T.Tensor((64, 64), T.float32)):
    with T.Kernel(1, threads=256) as bx:
        A_s = T.alloc_shared((64, 64), T.float16)
        B_s = T.alloc_shared((64, 32), T.float16)
        B_s1 = T.alloc_shared((64, 32), T.float16)
        c0 = T.alloc_fragment((64, 32), T.float32)
        c1 = T.alloc_fragment((64, 32), T.float32)
        T.clear(c0)
        T.clear(c1)
        for ko in T.serial(2):
            T.copy(A[0, ko * 64], A_s)
            with T.ws(0):
                T.copy(B[ko * 64, 0], B_s)
                T.gemm(A_s, B_s, c0)
            with T.ws(1):
                T.copy(B[ko * 64, 32], B_s1)
                T.gemm(A_s, B_s1, c1)
        T.copy(c0, C[0, 0])
        T.copy(c1, C[0, 32])
"""
    a, b, c = torch.randn(64, 128).half(), torch.randn(128, 64).half(), torch.zeros(64, 64)
    build_src(src)(a, b, c)  # each gemm accumulated once per iteration, not once per thread of its warp group
    assert torch.allclose(c, a.float() @ b.float(), atol=1e-2)


STACKED = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((64, 64), T.float16), B: T.Tensor((2, 64, 128), T.float16), C: T.Tensor((64, 64), T.float32)):
    with T.Kernel(1, threads=128) as bx:
        A_s = T.alloc_shared((64, 64), T.float16)
        B_s = T.alloc_shared((2, 64, 128), T.float16)
        acc = T.alloc_fragment((64, 64), T.float32)
        T.copy(A, A_s)
        T.copy(B, B_s)
        T.clear(acc)
        for s in T.serial(2):
            T.gemm(A_s, B_s[s, :, 0:64], acc)
        T.copy(acc, C)
"""


@pytest.mark.nvcc
def test_gemm_operands_address_the_matrix_their_region_selects():
    ck = _generate(STACKED.replace("B_s[s, :, 0:64]", "B_s[s, :, :]").replace("(64, 64), T.float32)):", "(64, 128), T.float32)):")
                   .replace("acc = T.alloc_fragment((64, 64)", "acc = T.alloc_fragment((64, 128)"), "sm_80")
    assert re.search(r"tl::gemm_ss<64, 128, 64, .*\(\(s \* 8192\)", ck.source)  # the stage's matrix, not [0, 0, 0]
    assert _compiles(ck, "sm_80")


@pytest.mark.nvcc
def test_gemm_on_part_of_a_tile_reads_that_part_with_mma_sync():
    ck = _generate(STACKED, "sm_80")  # it read the whole tile (K = 128) from column 0: wrong sums
    assert re.search(r"tl::gemm_ss<64, 64, 64, \d, \d, false, false, \w+, \w+, 64, 128>\(.*, 0, 0, 0, 0\)", ck.source)
    assert _compiles(ck, "sm_80")


def test_gemm_on_part_of_a_tile_the_templates_cannot_address_is_reported():
    from tilelang_core.codegen.cuda.common import LoweringError

    with pytest.raises(LoweringError) as info:  # ldmatrix rows are 16 bytes: a part must start at a column % 8 == 0
        _generate(STACKED.replace("B_s[s, :, 0:64]", "B_s[s, :, 4:68]"), "sm_80")
    assert "part of the shared tile 'B_s' (rows from 0, columns from 4)" in str(info.value)
    assert info.value.span.line == 14


@pytest.mark.nvcc
def test_wgmma_reads_whole_atoms_of_a_stacked_tile():
    ck = _generate(STACKED.replace("B_s[s, :, 0:64]", "B_s[s, :, 64:128]"), "sm_90a")
    # B_s starts after A_s (4096 halves); stage s is 8192 halves on, its second 64-column atom 4096 more
    assert re.search(r"tl_gemm_wgmma_\d+\(.*\(\(s \* 8192\) \+ 8192\)", ck.source)
    assert _compiles(ck, "sm_90a")
