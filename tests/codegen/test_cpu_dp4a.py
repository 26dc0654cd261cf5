"""T.dp4a on the CPU backend: C (int32) += the dot product of the four int8 values from each head on (row-major, so
a head may run into the next row), per thread for thread-local operands, as CUDA's __dp4a."""
from __future__ import annotations

import pytest

pytestmark = pytest.mark.tvm

KERNEL = '''
import tilelang_core as tilelang
import tilelang_core.language as T


@tilelang.jit(out_idx=[-1], target="cpu")
def dot(n: int = 8):
    @T.prim_func
    def main(A: T.Tensor((n, 16), "int8"), B: T.Tensor((n, 16), "int8"), C: T.Tensor((n,), "int32")):
        with T.Kernel(1, threads=n):
            a = T.alloc_local((16,), "int8")
            acc = T.alloc_local((1,), "int32")
            tx = T.get_thread_binding()
            for v in T.serial(16):
                a[v] = A[tx, v]
            acc[0] = 0
            for k in T.serial(4):
                T.dp4a(a[k * 4], B[tx, k * 4], acc[0])
            C[tx] = acc[0]
    return main


@tilelang.jit(out_idx=[-1], target="cpu")
def across_rows():
    @T.prim_func
    def main(A: T.Tensor((2, 3), "int8"), B: T.Tensor((4,), "int8"), C: T.Tensor((1,), "int32")):
        with T.Kernel(1, threads=1):
            C[0] = 7
            T.dp4a(A[0, 2], B[0], C[0])
    return main
'''


def test_dp4a_accumulates_per_thread(run_aliased):
    import torch

    mod = run_aliased("dp4a_cpu", KERNEL)
    a = torch.randint(-128, 128, (8, 16), dtype=torch.int8)
    b = torch.randint(-128, 128, (8, 16), dtype=torch.int8)
    torch.testing.assert_close(mod["dot"]()(a, b), (a.int() * b.int()).sum(1, dtype=torch.int32))


def test_dp4a_reads_on_into_the_next_row(run_aliased):
    import torch

    mod = run_aliased("dp4a_rows", KERNEL)
    a = torch.tensor([[1, 2, 3], [4, 5, 6]], dtype=torch.int8)
    b = torch.tensor([10, -1, 2, 100], dtype=torch.int8)
    assert mod["across_rows"]()(a, b).item() == 7 + 3 * 10 + 4 * -1 + 5 * 2 + 6 * 100
