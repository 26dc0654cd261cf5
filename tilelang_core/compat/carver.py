"""`tilelang.carver` and `tilelang.carver.arch`: the device model TileLang examples build configs from.

`driver.get_num_sms()` (compat/driver.py) and `CUDA(target)` read torch's device properties when a CUDA
device is visible, and otherwise describe an sm_90a (H100-class) device, the arch tilelang_core targets by
default. AMD devices (`CDNA`) raise UnsupportedFeatureError.
"""
from __future__ import annotations

import re

from . import UnsupportedFeatureError, driver

__all__ = ["CUDA", "CDNA", "TileDevice", "driver", "get_arch", "auto_infer_current_arch", "is_cuda_arch",
           "is_volta_arch", "is_ampere_arch", "is_ada_arch", "is_hopper_arch", "has_mma_support",
           "is_tensorcore_supported_precision"]

_SM90A = driver.SM90A


def _properties(device_id: int = 0):
    return driver.get_cuda_device_properties(device_id)


class TileDevice:
    """A device description: register and shared-memory capacity, SM count, warp size."""

    platform = "unknown"
    reg_cap = smem_cap = max_smem_usage = compute_max_core = warp_size = sm_partition = 0
    l2_cache_size_bytes = 0
    compute_capability = "unknown"


class CUDA(TileDevice):
    """`CUDA("cuda")`, `CUDA("cuda -arch=sm_80")` or `CUDA(target)`: limits of that CUDA device."""

    def __init__(self, target="cuda"):
        self.target = str(target)
        props = _properties()
        arch = re.search(r"sm_(\d+)", self.target)
        self.sm_version = int(arch.group(1)) if arch else props.major * 10 + props.minor
        self.name = str(props.name)
        self.platform = "CUDA"
        self.smem_cap = int(getattr(props, "shared_memory_per_block", _SM90A.shared_memory_per_block))
        self.max_smem_usage = 2 * self.smem_cap
        self.compute_max_core = int(props.multi_processor_count)
        self.warp_size = int(getattr(props, "warp_size", 32))
        self.compute_capability = str(self.sm_version)
        self.reg_cap = int(getattr(props, "regs_per_multiprocessor", 65536))
        self.sm_partition = 4
        self.l2_cache_size_bytes = int(getattr(props, "L2_cache_size", _SM90A.L2_cache_size))
        self.transaction_size = [32, 128]
        self.bandwidth = [750, 12080]

    def get_avaliable_tensorintrin_shapes(self):
        """The [M, N] shapes of the tensor-core instructions (mma, wmma)."""
        return [[16, 16], [16, 16]]

    def __repr__(self) -> str:
        return f"CUDA({self.target})"


class CDNA(TileDevice):
    """AMD CDNA devices: tilelang_core targets CUDA and the CPU only."""

    def __init__(self, target="hip"):
        raise UnsupportedFeatureError("tilelang.carver.arch.CDNA (AMD devices)", "use CUDA(\"cuda\")")


def get_arch(target="cuda") -> TileDevice:
    """The device model for a target string."""
    if str(target).startswith(("hip", "rocm")):
        return CDNA(target)
    return CUDA(target)


def auto_infer_current_arch() -> TileDevice:
    """The device model of the visible CUDA device (sm_90a without one)."""
    return CUDA("cuda")


def is_cuda_arch(arch) -> bool:
    """True for CUDA devices."""
    return isinstance(arch, CUDA)


def is_volta_arch(arch) -> bool:
    """sm_70 .. sm_79."""
    return is_cuda_arch(arch) and 70 <= arch.sm_version < 80


def is_ampere_arch(arch) -> bool:
    """sm_80 .. sm_88."""
    return is_cuda_arch(arch) and 80 <= arch.sm_version < 89


def is_ada_arch(arch) -> bool:
    """sm_89."""
    return is_cuda_arch(arch) and arch.sm_version == 89


def is_hopper_arch(arch) -> bool:
    """sm_90."""
    return is_cuda_arch(arch) and arch.sm_version == 90


def has_mma_support(arch) -> bool:
    """mma.sync tensor cores (sm_80 and newer)."""
    return is_cuda_arch(arch) and arch.sm_version >= 80


_TC_PRECISIONS = {("float16", "float32"), ("float16", "float16"), ("bfloat16", "float32"), ("int8", "int32")}


def is_tensorcore_supported_precision(in_dtype: str, accum_dtype: str, arch) -> bool:
    """Whether tensor cores take `in_dtype` inputs accumulating in `accum_dtype` on `arch`."""
    pairs = set(_TC_PRECISIONS)
    if arch.sm_version >= 89:
        pairs |= {("float8_e4m3", "float32"), ("float8_e5m2", "float32")}
    return (str(in_dtype), str(accum_dtype)) in pairs
