"""Kernel time from the torch profiler (TileLang's `_bench_with_cupti`) on the CPU backend: the operators and
tilelang_core CPU kernels a call runs count, the cache flush before each call does not."""
from __future__ import annotations

import runpy
import textwrap

import pytest

torch = pytest.importorskip("torch")

from tilelang_core.runtime.kernel_time import kernel_time, profiling  # noqa: E402

KERNEL = '''
import tilelang_core as tilelang
import tilelang_core.language as T


@tilelang.jit(target="cpu")
def scale(n: int = 1 << 16):
    @T.prim_func
    def main(x: T.Tensor((n,), T.float32), y: T.Tensor((n,), T.float32)):
        with T.Kernel(n // 256, threads=128) as bx:
            for i in T.Parallel(256):
                y[bx * 256 + i] = x[bx * 256 + i] * 3.0

    return main
'''


def test_a_call_that_runs_nothing_takes_no_kernel_time():
    cache = torch.empty(1 << 20, dtype=torch.int)
    assert kernel_time(lambda: None, cache, n_repeat=3) == 0.0  # the flush is not counted


def test_operators_on_the_stand_in_device_count():
    cache = torch.empty(1 << 20, dtype=torch.int)
    assert kernel_time(lambda: torch.zeros(1 << 20), cache, n_repeat=3) > 0


@pytest.mark.tvm
def test_a_tilelang_cpu_kernel_counts(tmp_path):
    """The kernel runs inside a profiler range of its own (no aten op stands for it), counted as kernel time."""
    from tilelang_core.runtime.kernel_time import KERNEL_RANGE

    path = tmp_path / "scale.py"
    path.write_text(textwrap.dedent(KERNEL))
    kernel = runpy.run_path(str(path))["scale"]()
    x, y = torch.randn(1 << 16), torch.empty(1 << 16)
    kernel(x, y)  # built and warm
    torch.testing.assert_close(y, x * 3.0)
    assert not profiling()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        assert profiling()
        kernel(x, y)
    assert [e.name for e in prof.events() if e.name.startswith(KERNEL_RANGE)] == [KERNEL_RANGE + "main"]
    assert kernel_time(lambda: kernel(x, y), torch.empty(16, dtype=torch.int), n_repeat=2) > 0
