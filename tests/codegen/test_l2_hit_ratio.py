"""T.annotate_l2_hit_ratio({B: r}): the CUDA launch record carries the hint (the launcher sets the stream's L2 access
policy window over B for that launch, runtime/launch.py), the kernel body is unchanged, the CPU backend ignores it,
and a hint that is not {global tensor: number in [0, 1]} is refused at the line. It was 'not supported by the CUDA
lowering yet' (the peer nvrtc L2 test stopped there on the H200)."""
from __future__ import annotations

import pytest

from tilelang_core import check_source

pytestmark = pytest.mark.tvm

SRC = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((1024,), T.float32), B: T.Tensor((1024,), T.float32), C: T.Tensor((1024,), T.float32)):
    with T.Kernel(4, threads=256) as bx:
        {hint}
        for i in T.Parallel(256):
            C[bx * 256 + i] = A[bx * 256 + i] + B[bx * 256 + i]
"""


@pytest.mark.nvcc
def test_the_hint_reaches_the_launch_and_not_the_kernel():
    from tilelang_core.runtime.artifact import build_artifact

    hinted = build_artifact(check_source(SRC.format(hint="T.annotate_l2_hit_ratio({B: 0.8})"), "l2.py").kernels[0],
                            "sm_90a")
    plain = build_artifact(check_source(SRC.format(hint="pass"), "l2.py").kernels[0], "sm_90a")
    assert hinted.launch_plan()[0]["l2_persist"] == [{"tensor": "B", "hit_ratio": pytest.approx(0.8)}]
    assert "l2_persist" not in plain.launch_plan()[0]
    def body(artifact):  # the kernels without the source-line comments
        code = artifact.source[artifact.source.find('extern "C" __global__'):]
        return [line for line in code.split("\n") if not line.strip().startswith("//")]
    assert body(hinted) == body(plain)


def test_the_cpu_backend_runs_the_kernel_with_the_hint():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    a, b, c = torch.randn(1024), torch.randn(1024), torch.zeros(1024)
    cpu.build(check_source(SRC.format(hint="T.annotate_l2_hit_ratio({B: 0.8})"), "l2.py").kernels[0])(a, b, c)
    torch.testing.assert_close(c, a + b)


@pytest.mark.parametrize("hint, message", [
    ("T.annotate_l2_hit_ratio({B: 1.5})", "the L2 hit ratio of `B` must be a number from 0 to 1"),
    ("T.annotate_l2_hit_ratio({bx: 0.5})", "the keys of T.annotate_l2_hit_ratio are global tensors"),
    ("T.annotate_l2_hit_ratio(B)", "takes a dict literal"),
])
def test_a_bad_hint_is_refused_at_its_line(hint, message):
    res = check_source(SRC.format(hint=hint), "l2.py")
    errors = [d for d in res.diagnostics if d.is_error]
    assert errors and errors[0].code == "bad-arguments" and message in errors[0].message
    assert errors[0].span.line == 7
