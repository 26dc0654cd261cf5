"""TMA tensor maps of a warp-specialised kernel travel by value in the kernel's parameter order (no GPU needed:
the driver's encoder is replaced by one that records what it was asked)."""
from __future__ import annotations

import ctypes

from tilelang_core.runtime import tensor_map
from tilelang_core.runtime.artifact import Artifact
from tilelang_core.runtime.launch import pack_args


class FakeTensor:
    def __init__(self, shape, ptr):
        self.shape, self.dtype, self._ptr, self.is_cuda, self.device = tuple(shape), "torch.float16", ptr, True, "cuda"

    def data_ptr(self):
        return self._ptr

    def is_contiguous(self):
        return True

    def element_size(self):
        return 2


def test_tensor_maps_are_encoded_from_the_tensor_and_placed_at_their_positions(monkeypatch):
    asked = []

    def fake_encode(spec, ptr, shape, elem_bytes):
        asked.append((spec["arg"], ptr, shape, elem_bytes, tuple(spec["box"]), spec["swizzle"]))
        return (ctypes.c_uint8 * 128)(*([len(asked)] * 128))

    monkeypatch.setattr(tensor_map, "encode", fake_encode)
    params = [{"name": "A", "kind": "tensor", "dtype": "float16", "shape": [256, 64], "is_output": False,
               "position": -1},
              {"name": "C", "kind": "tensor", "dtype": "float16", "shape": [256, 64], "is_output": True,
               "position": 1}]
    maps = [{"arg": "A_tmap0", "tensor": "A", "dtype": "float16", "box": [64, 128], "swizzle": 128, "position": 0}]
    art = Artifact("k", "k_kernel", "sm_90a", "", b"", [2], [256, 1, 1], 0, params, tensor_maps=maps)
    a, c = FakeTensor((256, 64), 0xA000), FakeTensor((256, 64), 0xC000)
    values, array = pack_args(art, [a, c], {})
    assert asked == [("A_tmap0", 0xA000, (256, 64), 2, (64, 128), 128)]
    first = ctypes.cast(array[0], ctypes.POINTER(ctypes.c_uint8 * 128)).contents
    assert list(first)[:4] == [1, 1, 1, 1]  # the map's 128 bytes, by value, first in the signature
    assert ctypes.cast(array[1], ctypes.POINTER(ctypes.c_void_p)).contents.value == 0xC000
