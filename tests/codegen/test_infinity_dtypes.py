"""T.infinity and the ±inf identities of max/min reductions for dtypes TVM has no infinity for (bfloat16,
float8_e5m2; e4m3 has none and saturates to ±448): run on the CPU backend, and built for sm_90a with nvcc."""
from __future__ import annotations

import runpy
import textwrap

import pytest

torch = pytest.importorskip("torch")

KERNELS = '''
import tilelang_core as tilelang
import tilelang_core.language as T


def make(dtype):
    @T.prim_func
    def main(X: T.Tensor((4, 8), dtype), A: T.Tensor((32,), dtype), B: T.Tensor((4,), dtype),
             C: T.Tensor((4,), dtype)):
        with T.Kernel(1, threads=32):
            T.fill(A, -T.infinity(dtype))
            f = T.alloc_fragment((4, 8), dtype)
            lo = T.alloc_fragment((4,), dtype)
            hi = T.alloc_fragment((4,), dtype)
            T.copy(X, f)
            T.reduce_min(f, lo, dim=1)
            T.reduce_max(f, hi, dim=1)
            T.copy(lo, B)
            T.copy(hi, C)
    return main


@tilelang.jit(out_idx=[-3, -2, -1], target="cpu")
def on_cpu(dtype):
    return make(dtype)


@tilelang.jit(out_idx=[-3, -2, -1], target="sm_90a")
def on_cuda(dtype):
    return make(dtype)
'''

DTYPES = [("bfloat16", float("-inf")), ("float8_e5m2", float("-inf")), ("float8_e4m3fn", -448.0)]


@pytest.fixture(scope="module")
def mod(tmp_path_factory):
    path = tmp_path_factory.mktemp("infinity") / "infinity_kernels.py"
    path.write_text(textwrap.dedent(KERNELS))
    return runpy.run_path(str(path), run_name="infinity_kernels")


@pytest.mark.tvm
@pytest.mark.parametrize("dtype,filled", DTYPES)
def test_cpu_infinity_and_reduction_identities(mod, dtype, filled):
    x = (torch.randn(4, 8, generator=torch.Generator().manual_seed(0)) * 10).to(getattr(torch, dtype))
    a, lo, hi = mod["on_cpu"](dtype)(x)
    assert a.float().eq(filled).all()
    assert torch.equal(lo.float(), x.float().min(1).values) and torch.equal(hi.float(), x.float().max(1).values)


@pytest.mark.tvm
@pytest.mark.nvcc
@pytest.mark.parametrize("dtype,filled", DTYPES[:2])
def test_cuda_infinity_builds_from_its_bits(mod, dtype, filled):
    src = mod["on_cuda"](dtype).get_kernel_source()  # the JIT compiles it with nvcc
    # -inf's bits, or (fp8 arithmetic runs in float32) +inf's bits negated in float and rounded back
    assert any(bits in src for bits in {"bfloat16": ["(ushort)65408"], "float8_e5m2": ["(uchar)252", "(uchar)124"]}[dtype])
