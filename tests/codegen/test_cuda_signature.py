"""A `cse_v*` scalar that TVM's host/device split made a kernel parameter but the body no longer reads is dropped
from the signature (the launcher passes the kernel's own parameters only: one too few was CUDA_ERROR_INVALID_VALUE
for dsa_sparse_finetune/sparse_mla_fwd on the H200); a parameter the body reads stays."""
from __future__ import annotations

from tilelang_core.codegen.cuda.generate import _drop_unused_params

RAW = '''extern "C" __global__ void __launch_bounds__(256) k_kernel(int* __restrict__ A_ptr, int cse_v1, int cse_v2, int n);
extern "C" __global__ void __launch_bounds__(256) k_kernel(int* __restrict__ A_ptr, int cse_v1, int cse_v2, int n) {
  A_ptr[threadIdx.x] = cse_v2 + n;
}
extern "C" __global__ void j_kernel(int* __restrict__ B_ptr, int cse_v3) {
  B_ptr[0] = 1;
}
'''


def test_unread_cse_parameters_leave_both_signatures_and_read_ones_stay():
    out = _drop_unused_params(RAW)
    assert out.count("k_kernel(int* __restrict__ A_ptr, int cse_v2, int n)") == 2
    assert "j_kernel(int* __restrict__ B_ptr) {" in out
    assert "cse_v1" not in out and "cse_v3" not in out
