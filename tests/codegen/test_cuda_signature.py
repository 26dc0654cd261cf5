"""A `cse_v*` scalar that TVM's host/device split made a kernel parameter but the body no longer reads is dropped
from the signature (the launcher passes the kernel's own parameters only: one too few was CUDA_ERROR_INVALID_VALUE
for dsa_sparse_finetune/sparse_mla_fwd on the H200); a parameter the body reads stays."""
from __future__ import annotations

import pytest

from tilelang_core.codegen.cuda.tvm_source import drop_unused_params

RAW = '''extern "C" __global__ void __launch_bounds__(256) k_kernel(int* __restrict__ A_ptr, int cse_v1, int cse_v2, int n);
extern "C" __global__ void __launch_bounds__(256) k_kernel(int* __restrict__ A_ptr, int cse_v1, int cse_v2, int n) {
  A_ptr[threadIdx.x] = cse_v2 + n;
}
extern "C" __global__ void j_kernel(int* __restrict__ B_ptr, int cse_v3) {
  B_ptr[0] = 1;
}
'''


def test_unread_cse_parameters_leave_both_signatures_and_read_ones_stay():
    out = drop_unused_params(RAW)
    assert out.count("k_kernel(int* __restrict__ A_ptr, int cse_v2, int n)") == 2
    assert "j_kernel(int* __restrict__ B_ptr) {" in out
    assert "cse_v1" not in out and "cse_v3" not in out


HOISTED = '''
import tilelang.language as T

def k(heads=4):
    S = T.dynamic("S")

    @T.prim_func
    def main(Q: T.Tensor((S * heads, 64), "float32"), W: T.Tensor((S, heads), "float32"),
             O: T.Tensor((S * heads,), "float32")):
        with T.Kernel(T.ceildiv(S * heads, 128), threads=512) as bx:
            acc = T.alloc_fragment((128,), "float32")
            for i in T.Parallel(128):
                acc[i] = Q[bx * 128 + i, 0] * W[(bx * 128 + i) // heads, (bx * 128 + i) % heads]
            for i in T.Parallel(128):
                O[bx * 128 + i] = acc[i]
    return main

kern = k()
'''


@pytest.mark.tvm
def test_a_hoisted_host_expression_the_kernel_reads_is_compiled_into_the_kernel(monkeypatch):
    """TVM's CSE hoists `S * 4` (the guards' bound) into a host-computed kernel parameter the launcher cannot pass
    (deepseek_v32/fp8_lighting_indexer): the kernel is compiled again without CSE and takes only S."""
    import importlib

    from tilelang_core import lower
    from tilelang_core.check import check_source

    gen = importlib.import_module("tilelang_core.codegen.cuda.generate")
    seen = []
    real = gen.host_made_params
    monkeypatch.setattr(gen, "host_made_params", lambda raw: seen.append(real(raw)) or seen[-1])
    res = check_source(HOISTED, "<t>")
    kernel = lower(res.kernels[0], target="sm_90a")
    assert seen == [True]
    sig = next(line for line in kernel.source.splitlines() if "__global__" in line)
    assert sig.endswith("float* __restrict__ W_ptr, int S);") and "cse_v" not in sig
