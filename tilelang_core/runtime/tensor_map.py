"""TMA tensor maps for warp-specialised sm_90a kernels, encoded at launch through the driver's
cuTensorMapEncodeTiled (ctypes on libcuda; no tvm, no cuda-python needed) and cached per tensor."""
from __future__ import annotations

import ctypes
import threading

# CUtensorMapDataType, CUtensorMapSwizzle (cuda.h)
_DTYPE = {"uint8": 0, "int8": 0, "float8_e4m3": 0, "float8_e4m3fn": 0, "float8_e5m2": 0, "uint16": 1, "int16": 1,
          "uint32": 2, "int32": 3, "uint64": 4, "int64": 5, "float16": 6, "float32": 7, "float64": 8, "bfloat16": 9}
_SWIZZLE = {0: 0, 32: 1, 64: 2, 128: 3}
_L2_256B = 3
_LOCK = threading.Lock()
_CACHE: dict = {}


class TensorMapError(Exception):
    """The driver refused to encode a tensor map (alignment or shape outside TMA's limits)."""


def _driver():
    lib = ctypes.CDLL("libcuda.so.1")
    fn = lib.cuTensorMapEncodeTiled
    fn.restype = ctypes.c_int
    fn.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_uint32, ctypes.c_void_p, ctypes.POINTER(ctypes.c_uint64),
                   ctypes.POINTER(ctypes.c_uint64), ctypes.POINTER(ctypes.c_uint32), ctypes.POINTER(ctypes.c_uint32),
                   ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]
    return fn


def encode(spec: dict, ptr: int, shape: tuple, elem_bytes: int) -> ctypes.Array:
    """128 bytes (64-byte aligned) of the tiled tensor map `spec` (box innermost first, swizzle in bytes) over a
    contiguous tensor at `ptr` of `shape`; raises TensorMapError with the driver's code."""
    key = (spec["arg"], spec["tensor"], ptr, tuple(shape), tuple(spec["box"]), spec["swizzle"])
    with _LOCK:
        hit = _CACHE.get(key)
        if hit is not None:
            return hit
    rank = len(shape)
    dims = (ctypes.c_uint64 * rank)(*reversed([int(d) for d in shape]))
    strides, acc = [], elem_bytes
    for d in reversed([int(d) for d in shape][1:]):
        acc *= d
        strides.append(acc)
    stride_arr = (ctypes.c_uint64 * max(rank - 1, 1))(*(strides or [0]))
    box = (ctypes.c_uint32 * rank)(*spec["box"])
    ones = (ctypes.c_uint32 * rank)(*([1] * rank))
    raw = (ctypes.c_uint8 * 192)()
    at = (ctypes.addressof(raw) + 63) // 64 * 64
    err = _driver()(at, _DTYPE[spec["dtype"]], rank, ptr, dims, stride_arr, box, ones, 0, _SWIZZLE[spec["swizzle"]],
                    _L2_256B, 0)
    if err != 0:
        raise TensorMapError(f"cuTensorMapEncodeTiled failed (CUresult {err}) for '{spec['tensor']}' of shape "
                             f"{tuple(shape)}, box {spec['box'][::-1]}: TMA needs a 16-byte-aligned base and "
                             "16-byte-multiple row strides")
    value = (ctypes.c_uint8 * 128).from_address(at)
    value._keep = raw  # noqa: SLF001  (the aligned view keeps its buffer alive)
    with _LOCK:
        if len(_CACHE) > 4096:
            _CACHE.clear()
        _CACHE[key] = value
    return value
