"""Warp and lane indices (T.get_lane_idx / get_warp_idx / get_warp_idx_sync / get_warp_group_idx with default,
closure-None and custom sizes) and T.shuffle_elect: CPU results against torch, CUDA compiled with nvcc, and the
argument checks at the user's line."""
from __future__ import annotations

import pytest
from test_cpu_backend import build_src
from thread_kernels import kernel_of

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

KERNEL = """
import tilelang.language as T

warp = {warp}
per = {per}

@T.prim_func
def k(A: T.Tensor(({n},), T.int32)):
    with T.Kernel(1, threads={n}) as _:
        tx = T.get_thread_binding()
        A[tx] = {expr}
"""


def _run(n: int, expr: str, warp=None, per=None):
    mod = build_src(KERNEL.format(n=n, expr=expr, warp=warp, per=per))
    out = torch.full((n,), -1, dtype=torch.int32)
    mod(out)
    return out


@pytest.mark.parametrize("n,expr,warp,per,expect", [
    (128, "T.get_lane_idx(warp)", None, None, lambda t: t % 32),
    (256, "T.get_lane_idx(warp)", 64, None, lambda t: t % 64),
    (256, "T.get_warp_idx_sync(warp)", 16, None, lambda t: t // 16),
    (320, "T.get_warp_idx(warp)", 20, None, lambda t: t // 20),
    (128, "T.get_warp_idx()", None, None, lambda t: t // 32),
    (512, "T.get_warp_group_idx(warp, per)", 32, 5, lambda t: t // 160),
    (512, "T.get_warp_group_idx(warp, per)", None, None, lambda t: t // 128),
    (256, "T.get_warp_group_idx(warps_per_group=per)", None, 2, lambda t: t // 64),
    (256, "T.shuffle_elect(64)", None, None, lambda t: (t % 64 == 0).int()),
    (128, "T.shuffle_elect(0)", None, None, lambda t: (t == 0).int()),
])
def test_thread_indices_on_the_cpu(n, expr, warp, per, expect):
    t = torch.arange(n, dtype=torch.int32)
    assert torch.equal(_run(n, expr, warp, per), expect(t).to(torch.int32))


@pytest.mark.parametrize("expr,message", [
    ("T.shuffle_elect(-1)", "must be 0 (the whole block) or positive"),
    ("T.shuffle_elect()", "T.shuffle_elect needs thread_extent"),
    ("T.get_lane_idx(0)", "`warp_size` of T.get_lane_idx must be positive"),
])
def test_bad_arguments_are_reported_at_the_call(expr, message):
    from tilelang_core import check_source

    res = check_source(KERNEL.format(n=64, expr=expr, warp=None, per=None), "<test>")
    assert [d.code for d in res.errors] == ["bad-arguments"] and message in res.errors[0].message
    assert res.errors[0].span.line == 11  # the `A[tx] = ...` line


@pytest.mark.nvcc
def test_warp_indices_and_elect_compile_for_cuda():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    src = KERNEL.format(n=256, expr="T.get_lane_idx(warp) + T.get_warp_group_idx(warp, per) + T.shuffle_elect(64)",
                        warp=16, per=2)
    ck = generate(kernel_of(src), "sm_90a")
    assert "threadIdx.x) & 15" in ck.source and "threadIdx.x) >> 5" in ck.source and "% 64) == 0" in ck.source
    assert compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


def test_hip_is_never_available():
    from tilelang_core.compat.rocm_target import check_hip_availability

    assert check_hip_availability() is False
