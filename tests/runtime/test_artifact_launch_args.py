"""The launcher's argument binding and packing, checked without a GPU."""
from __future__ import annotations

import ctypes

import pytest

from tilelang_core.runtime.artifact import Artifact
from tilelang_core.runtime.launch import LaunchError, bind_dims, pack_args


class FakeTensor:
    def __init__(self, shape, dtype="float16", ptr=0x1000, cuda=True, contiguous=True):
        self.shape, self.dtype, self._ptr, self.is_cuda, self._c = tuple(shape), f"torch.{dtype}", ptr, cuda, contiguous
        self.device = "cuda:0" if cuda else "cpu"

    def data_ptr(self):
        return self._ptr

    def is_contiguous(self):
        return self._c


def _art():
    params = [
        {"name": "A", "kind": "tensor", "dtype": "float16", "shape": ["M", 64], "is_output": False, "position": 1},
        {"name": "scale", "kind": "scalar", "dtype": "float32", "shape": [], "is_output": False, "position": 2},
        {"name": "B", "kind": "tensor", "dtype": "float16", "shape": ["M", 64], "is_output": True, "position": 0},
        {"name": "M", "kind": "dim", "dtype": "int32", "shape": [], "is_output": False, "position": 3},
    ]
    return Artifact("k", "k_kernel", "sm_90a", "", b"", ["T.ceildiv(M, 128)"], [128, 1, 1], 0, params)


def test_dims_come_from_shapes_and_args_follow_the_kernel_signature():
    art = _art()
    args = [FakeTensor((300, 64), ptr=0xA000), 2.5, FakeTensor((300, 64), ptr=0xB000)]
    dims = bind_dims(art, args)
    assert dims == {"M": 300} and art.grid_for(dims) == (3, 1, 1)
    values, array = pack_args(art, args, dims)
    ordered = [ctypes.cast(array[i], ctypes.POINTER(type(v))).contents.value
               for i, v in enumerate([ctypes.c_void_p(), ctypes.c_void_p(), ctypes.c_float(), ctypes.c_int32()])]
    assert ordered[0] == 0xB000 and ordered[1] == 0xA000
    assert ordered[2] == pytest.approx(2.5) and ordered[3] == 300


@pytest.mark.parametrize("args,needle", [
    ([FakeTensor((300, 64))], "takes 3 arguments"),
    ([FakeTensor((300, 64)), 1.0, FakeTensor((300, 32))], "shape"),
    ([FakeTensor((300, 64)), 1.0, FakeTensor((200, 64))], "dim 'M'"),
    ([FakeTensor((300, 64), dtype="float32"), 1.0, FakeTensor((300, 64))], "must be float16"),
    ([FakeTensor((300, 64), cuda=False), 1.0, FakeTensor((300, 64))], "CUDA tensor"),
    ([FakeTensor((300, 64), contiguous=False), 1.0, FakeTensor((300, 64))], "contiguous"),
])
def test_bad_arguments_name_the_parameter(args, needle):
    art = _art()
    with pytest.raises(LaunchError, match=needle):
        pack_args(art, args, bind_dims(art, args))


def test_a_tfloat32_parameter_takes_a_float32_tensor_and_nothing_else():
    """torch has no tfloat32 tensors: deepseek_mhc/example_mhc_pre passes float32 (refused on the H200 before)."""
    params = [{"name": "fn", "kind": "tensor", "dtype": "tfloat32", "shape": [64], "is_output": False, "position": 0}]
    art = Artifact("k", "k_kernel", "sm_90a", "", b"", [1], [128, 1, 1], 0, params)
    values, _ = pack_args(art, [FakeTensor((64,), dtype="float32", ptr=0xC000)], {})
    assert values[0].value == 0xC000
    with pytest.raises(LaunchError, match="must be tfloat32, got float16"):
        pack_args(art, [FakeTensor((64,), dtype="float16")], {})


def test_a_packed_fp4_parameter_takes_its_bytes_and_binds_dims_from_the_logical_shape():
    """A (m, 16) float4_e2m1fn tensor travels as (m, 8) bytes (the JIT passes the uint8 view): m binds from the
    bytes' first dim, the last dim counts two values a byte (refused on the H200 before: 'must have shape')."""
    params = [{"name": "x", "kind": "tensor", "dtype": "float4_e2m1fn", "shape": ["m", 16], "is_output": False,
               "position": 0},
              {"name": "m", "kind": "dim", "dtype": "int32", "shape": [], "is_output": False, "position": 1}]
    art = Artifact("k", "k_kernel", "sm_90a", "", b"", [1], [32, 1, 1], 0, params)
    packed = FakeTensor((4, 8), dtype="uint8", ptr=0xD000)
    dims = bind_dims(art, [packed])
    assert dims == {"m": 4}
    values, _ = pack_args(art, [packed], dims)
    assert values[0].value == 0xD000 and values[1].value == 4
    with pytest.raises(LaunchError, match="must have shape"):
        bind_dims(art, [FakeTensor((4, 16), dtype="uint8")])  # 32 values a row, not 16
    with pytest.raises(LaunchError, match="must be float4_e2m1fn, got float16"):
        pack_args(art, [FakeTensor((4, 8), dtype="float16")], {"m": 4})


def test_a_tensor_past_32_bit_indexing_is_refused_before_the_launch():
    """2**32 bf16 elements (the peer int64 fill test): the 32-bit indices of the generated CUDA would wrap, which
    was an illegal memory access on the H200; the launch is refused instead, naming the argument."""
    params = [{"name": "x", "kind": "tensor", "dtype": "bfloat16", "shape": ["n"], "is_output": False, "position": 0},
              {"name": "n", "kind": "dim", "dtype": "int32", "shape": [], "is_output": False, "position": 1}]
    art = Artifact("k", "k_kernel", "sm_90a", "", b"", [1], [128, 1, 1], 0, params)
    assert bind_dims(art, [FakeTensor((2**31 - 1,), dtype="bfloat16")]) == {"n": 2**31 - 1}
    with pytest.raises(LaunchError, match="argument 'x' has 4294967296 elements"):
        bind_dims(art, [FakeTensor((2**32,), dtype="bfloat16")])
    wide = [dict(params[0], index_bits=64), dict(params[1], dtype="int64")]  # an int64 dim: 64-bit indices
    art = Artifact("k", "k_kernel", "sm_90a", "", b"", [1], [128, 1, 1], 0, wide)
    big = FakeTensor((2**32,), dtype="bfloat16", ptr=0xE000)
    values, _ = pack_args(art, [big], bind_dims(art, [big]))
    assert isinstance(values[1], ctypes.c_int64) and values[1].value == 2**32


class StridedTensor(FakeTensor):
    def __init__(self, shape, strides, **kw):
        super().__init__(shape, **kw)
        self._strides = tuple(strides)

    def stride(self):
        return self._strides


def test_a_launch_reuses_packed_arguments_only_for_the_same_addresses_layouts_and_scalars():
    from tilelang_core.runtime.launch import _signature

    art = _art()

    def key(ptr=0xA000, strides=(64, 1), scale=2.5, stream=7):
        return _signature(art, [StridedTensor((300, 64), strides, ptr=ptr), scale,
                                StridedTensor((300, 64), (64, 1), ptr=0xB000)], stream)

    assert key() == key() and key() is not None
    assert len({key(), key(ptr=0xC000), key(strides=(1, 300)), key(scale=3.0), key(stream=8)}) == 5
    assert _signature(art, [StridedTensor((300, 64), (64, 1)), [2.5], StridedTensor((300, 64), (64, 1))], 7) is None
    art.workspaces = [{"name": "ws", "dtype": "float32", "shape": [4]}]  # zeroed afresh for every launch
    assert key() is None
