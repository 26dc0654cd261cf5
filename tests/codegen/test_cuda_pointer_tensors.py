"""Tensors made in a kernel from a table of pointers (`T.make_tensor(ptrs[i], shape, dtype)` over a T.ptr
tensor): the pointer is bound where the tensor is made; lowered for sm_90a and compiled with nvcc, and run on
the CPU backend against torch with a table of data_ptr()s."""
from __future__ import annotations

import textwrap

import pytest

from tilelang_core import check_source, lower

pytestmark = [pytest.mark.tvm]

KERNELS = """
import tilelang.language as T

def grouped_scale(groups, M, N):
    @T.prim_func
    def k(ptrs: T.Tensor([groups], T.ptr), outs: T.Tensor([groups], T.ptr), scale: T.Tensor([groups], "float32")):
        with T.Kernel(groups, threads=128) as bx:
            g = T.alloc_var(dtype=T.int32)
            g = bx
            A = T.make_tensor(ptrs[g], (M, N), "float16")
            O = T.make_tensor(outs[g], (M, N), "float32")
            A_s = T.alloc_shared((M, N), "float16")
            acc = T.alloc_fragment((M, N), "float32")
            T.copy(A, A_s)
            T.copy(A_s, acc)
            for i, j in T.Parallel(M, N):
                acc[i, j] = acc[i, j] * scale[g]
            g = 0  # the tensors stay where they were made
            T.copy(acc, O)
    return k

scaled = grouped_scale(3, 16, 32)
"""


def _kernel():
    res = check_source(textwrap.dedent(KERNELS), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


@pytest.mark.nvcc
def test_pointer_tensors_lower_and_compile_for_sm90a():
    from tilelang_core.runtime.artifact import compile_cubin

    res = lower(_kernel(), "sm_90a")
    assert "void* A_data = " in res.source and "ptrs_ptr[" in res.source
    assert compile_cubin(res.source, "sm_90a")[:4] == b"\x7fELF"


def test_pointer_tensors_match_torch_on_the_cpu_backend():
    torch = pytest.importorskip("torch")
    from tilelang_core.codegen import cpu

    ins = [torch.randn(16, 32).half() for _ in range(3)]
    outs = [torch.zeros(16, 32) for _ in range(3)]
    scale = torch.tensor([0.5, 2.0, -1.0])
    table = lambda ts: torch.tensor([t.data_ptr() for t in ts], dtype=torch.int64)  # noqa: E731
    cpu.build(_kernel())(table(ins), table(outs), scale)
    for a, o, s in zip(ins, outs, scale):
        torch.testing.assert_close(o, a.float() * s)


def test_a_pointer_table_parameter_is_an_int64_tensor_with_integer_extents():
    ptrs, outs, scale = _kernel().params  # TileLang lowers a T.ptr table to an int64 buffer of addresses
    assert (ptrs.dtype, outs.dtype, scale.dtype) == ("int64", "int64", "float32")
    assert [int(d) for d in ptrs.shape] == [3]  # extents convert to int, as TVM's IntImm does
