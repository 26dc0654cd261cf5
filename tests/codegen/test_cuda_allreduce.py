"""TVM's raw thread all-reduce (`with T.attr(T.comm_reducer(...), "reduce_scope", ...)` around
`T.tvm_thread_allreduce`), as the gemv examples write it: lowered for sm_90a to warp shuffles over the
threadIdx.x lanes (over threadIdx.y / z through shared memory) and compiled with nvcc; a reducer it does not
know is a diagnostic."""
from __future__ import annotations

import textwrap

import pytest

pytestmark = pytest.mark.tvm

KERNEL = '''
import tilelang_core.language as T


@T.prim_func
def rowsum(A: T.Tensor((64, 256), "float32"), C: T.Tensor((64,), "float32")):
    with T.Kernel(16, threads=(16, 4)) as bx:
        acc = T.alloc_local((1,), "float32")
        total = T.alloc_local((1,), "float32")
        kr = T.thread_binding(0, 16, thread="threadIdx.x")
        ni = T.thread_binding(0, 4, thread="threadIdx.y")
        acc[0] = 0.0
        for k in T.serial(16):
            acc[0] += A[bx * 4 + ni, k * 16 + kr]
        with T.attr(T.comm_reducer(lambda x, y: REDUCE, [T.cast(0, "float32")]), "reduce_scope",
                    T.reinterpret(T.uint64(0), dtype="handle")):
            T.evaluate(T.tvm_thread_allreduce(T.uint32(1), acc[0], True, total[0], kr, dtype="handle"))
        if kr == 0:
            C[bx * 4 + ni] = total[0]
'''


def _func(reduce: str):
    from tilelang_core import check_source

    return check_source(textwrap.dedent(KERNEL).replace("REDUCE", reduce), "<allreduce>")


@pytest.mark.nvcc
def test_thread_allreduce_is_lanes_allreduce_over_threadidx_x():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    result = _func("x + y")
    assert not [d for d in result.diagnostics if d.severity == "error"]
    kernel = generate(result.kernels[0], "sm_90a")
    assert "tl::lanes_allreduce(" in kernel.source and ", 0, 16)" in kernel.source
    assert compile_cubin(kernel.source, "sm_90a")


def test_an_unknown_reducer_is_reported_at_the_comm_reducer():
    result = _func("x * y")
    errors = [d for d in result.diagnostics if d.code == "unsupported-syntax"]
    assert errors and "comm_reducer" in errors[0].message and errors[0].span.line == 15


@pytest.mark.nvcc
@pytest.mark.parametrize("reduce, op", [("x + y", 0), ("T.max(x, y)", 1)])
def test_thread_allreduce_over_threadidx_y_goes_through_shared_memory(reduce, op):
    from tilelang_core.codegen.cuda import generate
    from tilelang_core import check_source
    from tilelang_core.runtime.artifact import compile_cubin

    source = textwrap.dedent(KERNEL).replace("REDUCE", reduce).replace("total[0], kr,", "total[0], ni,")

    result = check_source(source, "<allreduce_y>")
    assert not result.errors
    kernel = generate(result.kernels[0], "sm_90a")
    # every thread publishes its value, then folds the 4 values of its threadIdx.x column (stride 16)
    assert "((float*)smem_ptr)[((int)threadIdx.x)] = acc_ptr[0];" in kernel.source
    assert f"tl::combine(allreduce_acc_ptr[0], ((float*)smem_ptr)[" in kernel.source and f", {op});" in kernel.source
    assert "allreduce_acc_ptr[0] = ((float*)smem_ptr)[(((int)threadIdx.x) & 15)];" in kernel.source
    assert "for (int k_1 = 1; k_1 < 4; ++k_1)" in kernel.source and "(k_1 * 16)" in kernel.source
    assert kernel.smem_bytes == 64 * 4
    assert compile_cubin(kernel.source, "sm_90a")
