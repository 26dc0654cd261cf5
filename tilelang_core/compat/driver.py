"""`tilelang.carver.arch.driver`: CUDA device queries (torch's device properties, or the sm_90a model when no
device is visible). Each is marked a pure query, so a kernel body can call it (`T.Kernel(driver.get_num_sms())`
in an eager kernel) and the frontend evaluates it while parsing.
"""
from __future__ import annotations

import types

__all__ = ["get_cuda_device_properties", "get_device_name", "get_num_sms", "get_shared_memory_per_block",
           "get_max_dynamic_shared_size_bytes", "get_registers_per_block", "get_persisting_l2_cache_max_size",
           "get_device_attribute"]

# What an sm_90a H100 SXM reports; used when no CUDA device is visible.
SM90A = types.SimpleNamespace(
    name="NVIDIA H100 (sm_90a model, no device visible)", major=9, minor=0, multi_processor_count=132,
    warp_size=32, regs_per_multiprocessor=65536, shared_memory_per_block=48 * 1024,
    shared_memory_per_block_optin=232448, L2_cache_size=50 * 1024**2, max_threads_per_block=1024)


def _pure(fn):
    fn.__tilelang_core_pure__ = True  # the kernel frontend may call it at parse time (frontend/constcalls.py)
    return fn


@_pure
def get_cuda_device_properties(device_id: int = 0):
    """torch's device properties (or the sm_90a model without a device)."""
    try:
        import torch

        if torch.cuda.is_available():
            return torch.cuda.get_device_properties(device_id)
    except (ImportError, RuntimeError, AssertionError):
        pass
    return SM90A


def _prop(name: str, device_id: int = 0):
    return getattr(get_cuda_device_properties(device_id), name, getattr(SM90A, name))


@_pure
def get_device_name(device_id: int = 0) -> str:
    """The device's name."""
    return str(_prop("name", device_id))


@_pure
def get_num_sms(device_id: int = 0) -> int:
    """Number of streaming multiprocessors."""
    return int(_prop("multi_processor_count", device_id))


@_pure
def get_shared_memory_per_block(device_id: int = 0, format: str = "bytes") -> int:  # noqa: A002
    """Static shared memory per block (bytes, or "kb"/"mb")."""
    return _scaled(int(_prop("shared_memory_per_block", device_id)), format)


@_pure
def get_max_dynamic_shared_size_bytes(device_id: int = 0, format: str = "bytes") -> int:  # noqa: A002
    """Opt-in dynamic shared memory per block (bytes, or "kb"/"mb")."""
    return _scaled(int(_prop("shared_memory_per_block_optin", device_id)), format)


@_pure
def get_registers_per_block(device_id: int = 0) -> int:
    """32-bit registers available to one block."""
    return int(_prop("regs_per_multiprocessor", device_id))


@_pure
def get_persisting_l2_cache_max_size(device_id: int = 0) -> int:
    """L2 cache size in bytes."""
    return int(_prop("L2_cache_size", device_id))


@_pure
def get_device_attribute(attr, device_id: int = 0):
    """A torch device property by name (e.g. "multi_processor_count")."""
    return _prop(str(attr), device_id)


def _scaled(value: int, format: str) -> int:  # noqa: A002
    return {"bytes": value, "kb": value // 1024, "mb": value // 1024**2}.get(format.lower(), value)
