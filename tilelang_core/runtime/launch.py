"""Run a kernel Artifact on torch CUDA tensors through NVIDIA's driver API (cuda-python), or CuPy.

Needs no tvm: the artifact carries the cubin, launch configuration and parameter list. Symbolic
dims are bound from the tensors' shapes and passed as int32 kernel arguments.
"""
from __future__ import annotations

import ctypes
import threading

_CTYPE = {"int32": ctypes.c_int32, "int64": ctypes.c_int64, "float32": ctypes.c_float, "float64": ctypes.c_double,
          "bool": ctypes.c_bool, "uint32": ctypes.c_uint32}
_LOCK = threading.Lock()
_MODULES: dict = {}


class LaunchError(Exception):
    """Arguments do not match the kernel, or the driver refused the launch."""


def bind_dims(artifact, args: list) -> dict:
    """Symbolic dim name -> int, read off the tensors' shapes (checks the static dims too)."""
    dims: dict = {}
    tensors = [p for p in artifact.params if p["kind"] != "dim"]
    if len(args) != len(tensors):
        raise LaunchError(f"kernel '{artifact.name}' takes {len(tensors)} arguments "
                          f"({', '.join(p['name'] for p in tensors)}), got {len(args)}")
    for p, a in zip(tensors, args):
        if p["kind"] != "tensor":
            continue
        shape = tuple(getattr(a, "shape", ()))
        if len(shape) != len(p["shape"]):
            raise LaunchError(f"argument '{p['name']}' must have {len(p['shape'])} dims, got shape {shape}")
        for want, have in zip(p["shape"], shape):
            if isinstance(want, int):
                if want != have:
                    raise LaunchError(f"argument '{p['name']}' must have shape {tuple(p['shape'])}, got {shape}")
            elif isinstance(want, str) and want.isidentifier():
                if dims.setdefault(want, int(have)) != int(have):
                    raise LaunchError(f"dim '{want}' of '{p['name']}' is {have} but another argument set it to "
                                      f"{dims[want]}")
    return dims


def pack_args(artifact, args: list, dims: dict) -> tuple[list, ctypes.Array]:
    """ctypes values for every kernel parameter and the void** array cuLaunchKernel takes."""
    values = []
    it = iter(args)
    for p in artifact.params:
        if p["kind"] == "dim":
            values.append(ctypes.c_int32(int(dims[p["name"]])))
            continue
        a = next(it)
        if p["kind"] == "tensor":
            values.append(ctypes.c_void_p(_data_ptr(a, p)))
        else:
            values.append(_CTYPE.get(p["dtype"], ctypes.c_int32)(a))
    order = sorted((p.get("position", k), k) for k, p in enumerate(artifact.params) if p.get("position", k) >= 0)
    ordered = [values[k] for _, k in order]
    array = (ctypes.c_void_p * max(len(ordered), 1))(*[ctypes.addressof(v) for v in ordered])
    return values, array


def _data_ptr(t, p) -> int:
    dtype = str(getattr(t, "dtype", "")).replace("torch.", "")
    if dtype and dtype != p["dtype"]:
        raise LaunchError(f"argument '{p['name']}' must be {p['dtype']}, got {dtype}")
    if hasattr(t, "is_cuda") and not t.is_cuda:
        raise LaunchError(f"argument '{p['name']}' must be a CUDA tensor, got one on {t.device}")
    if hasattr(t, "is_contiguous") and not t.is_contiguous():
        raise LaunchError(f"argument '{p['name']}' must be contiguous (call .contiguous())")
    return int(t.data_ptr())


def _check(result):
    err = result[0] if isinstance(result, tuple) else result
    if int(err) != 0:
        from cuda.bindings import driver as cu

        name = cu.cuGetErrorName(err)[1]
        raise LaunchError(f"CUDA driver error {name.decode() if isinstance(name, bytes) else name}")
    return result[1] if isinstance(result, tuple) and len(result) == 2 else result


def _function(artifact):
    """The loaded CUfunction for an artifact (one module per content hash and device)."""
    import torch
    from cuda.bindings import driver as cu

    dev = torch.cuda.current_device()
    key = (artifact.content_hash, artifact.kernel_symbol, dev)
    with _LOCK:
        if key in _MODULES:
            return _MODULES[key]
        torch.cuda.init()
        torch.empty(1, device="cuda")  # make the primary context current on this thread
        module = _check(cu.cuModuleLoadData(artifact.cubin))
        fn = _check(cu.cuModuleGetFunction(module, artifact.kernel_symbol.encode()))
        if artifact.smem_bytes > 48 * 1024:
            attr = cu.CUfunction_attribute.CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            _check(cu.cuFuncSetAttribute(fn, attr, artifact.smem_bytes))
        _MODULES[key] = (module, fn)
        return _MODULES[key]


def launch(artifact, tensors, stream=None) -> None:
    """Launch `artifact` on torch CUDA tensors (and scalars) in parameter order, on `stream`."""
    import torch
    from cuda.bindings import driver as cu

    args = list(tensors)
    dims = bind_dims(artifact, args)
    values, array = pack_args(artifact, args, dims)
    _, fn = _function(artifact)
    gx, gy, gz = artifact.grid_for(dims)
    bx, by, bz = (list(artifact.block) + [1, 1])[:3]
    if stream is None:
        stream = torch.cuda.current_stream()
    handle = stream.cuda_stream if hasattr(stream, "cuda_stream") else int(stream)
    if min(gx, gy, gz) <= 0:
        return
    _check(cu.cuLaunchKernel(fn, gx, gy, gz, bx, by, bz, artifact.smem_bytes, cu.CUstream(handle),
                             ctypes.addressof(array), 0))
    del values
