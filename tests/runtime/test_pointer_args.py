"""`T.ptr` kernel parameters take a tensor (its address) or an address as an int, on the CPU backend (through the
cached library and through tvm's module) and in a CUDA launch, where the address is packed as a 64-bit pointer."""
from __future__ import annotations

import ctypes

import pytest

from tilelang_core.runtime.artifact import Artifact
from tilelang_core.runtime.launch import pack_args


class FakeCudaTensor:
    shape, dtype, is_cuda, device = (8,), "torch.float32", True, "cuda:0"

    def data_ptr(self):
        return 0x7F00_0000_1000

    def is_contiguous(self):
        return True


def test_a_cuda_launch_packs_a_pointer_parameter_as_64_bits():
    params = [{"name": "p", "kind": "scalar", "dtype": "handle", "shape": [], "is_output": False, "position": 0},
              {"name": "X", "kind": "tensor", "dtype": "float32", "shape": [8], "is_output": False, "position": 1}]
    art = Artifact("k", "k_kernel", "sm_90a", "", b"", [1], [32, 1, 1], 0, params)
    values, _ = pack_args(art, [0x7F00_0000_2000, FakeCudaTensor()], {})
    assert isinstance(values[0], ctypes.c_void_p) and values[0].value == 0x7F00_0000_2000


@pytest.mark.tvm
@pytest.mark.parametrize("cached", [True, False])
def test_cpu_pointer_parameters_take_tensors_and_addresses(cached):
    torch = pytest.importorskip("torch")
    import tilelang_core as tilelang
    import tilelang_core.language as T
    from tilelang_core.runtime.cpu_artifact import load_cpu_kernel
    from tilelang_core.runtime.jit import to_ir

    @T.prim_func
    def twice(src: T.ptr, dst: T.ptr, n: T.int32):
        X = T.make_tensor(src, (n,), "float32")
        Y = T.make_tensor(dst, (n,), "float32")
        with T.Kernel(1, threads=32):
            for i in T.serial(n):
                Y[i] = X[i] * 2

    x = torch.arange(10, dtype=torch.float32)
    if cached:
        kernel, y, z = tilelang.compile(twice, target="cpu"), torch.zeros(10), torch.zeros(10)
        kernel(x, y, 10)
        kernel(x.data_ptr(), z.data_ptr(), 10)
        assert torch.equal(y, x * 2) and torch.equal(z, x * 2)
    else:  # no cache: the kernel runs through tvm's module
        kernel, y = load_cpu_kernel(to_ir(twice), cache=False), torch.zeros(10)
        assert kernel.library is None
        kernel(x.data_ptr(), y.data_ptr(), 10)
        assert torch.equal(y, x * 2)
