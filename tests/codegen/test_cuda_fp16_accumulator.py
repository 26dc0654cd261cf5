"""A T.gemm of float16 inputs into a float16 accumulator runs on tensor cores (mma.sync with f16 accumulators), not
as scalar FMAs: each 16-deep k-step is summed before it is rounded to fp16, as the CPU backend models it. The FMA
path rounded every product; ~8 % of a K=768 GEMM was past atol=rtol=1e-2 on the H200 (peer gemm tests)."""
from __future__ import annotations

import pytest

from tilelang_core import check_source

pytestmark = [pytest.mark.tvm, pytest.mark.nvcc]

GEMM = """
import tilelang.language as T

@T.prim_func
def main(A: T.Tensor((512, 768), T.float16), B: T.Tensor((768, 1024), T.float16), C: T.Tensor((512, 1024), {acc})):
    with T.Kernel(8, 4, threads=128) as (bx, by):
        A_shared = T.alloc_shared((128, 32), T.float16)
        B_shared = T.alloc_shared((32, 128), T.float16)
        {a_regs}
        C_local = T.alloc_fragment((128, 128), {acc})
        T.clear(C_local)
        for k in T.Pipelined(24, num_stages=2):
            T.copy(A[by * 128, k * 32], A_shared)
            T.copy(B[k * 32, bx * 128], B_shared)
            {gemm}
        T.copy(C_local, C[by * 128, bx * 128])
"""


@pytest.mark.parametrize("a_in_registers", [False, True])
def test_a_half_accumulator_gemm_is_mma_sync_and_compiles(a_in_registers):
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    regs = ("A_frag = T.alloc_fragment((128, 32), T.float16)", "T.copy(A_shared, A_frag)\n            "
            "T.gemm(A_frag, B_shared, C_local)") if a_in_registers else ("", "T.gemm(A_shared, B_shared, C_local)")
    for acc, template in (("T.float16", "gemm_rs" if a_in_registers else "gemm_ss"),
                          ("T.float32", "gemm_rs" if a_in_registers else "gemm_ss")):
        src = GEMM.format(acc=acc, a_regs=regs[0], gemm=regs[1])
        res = check_source(src, "gemm16.py")
        assert not res.errors, [d.message for d in res.errors]
        cuda = generate(res.kernels[0], "sm_80").source
        kernel = cuda.split('extern "C" __global__')[-1]
        assert f"tl::{template}<" in kernel and "gemm_fma" not in kernel and "gemm_rs_fma" not in kernel
        if acc == "T.float16":
            assert "half C_local" in kernel
            assert compile_cubin(cuda, "sm_80")[:4] == b"\x7fELF"
