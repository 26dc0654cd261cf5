"""`tilelang.contrib.nvcc`: compute-capability queries (the visible device's, else sm_90a's)."""
from __future__ import annotations

import re

__all__ = ["get_target_compute_version", "parse_compute_version", "get_target_arch", "have_fp16", "have_bf16",
           "have_fp8", "have_tensorcore", "have_tma", "is_hopper", "get_cuda_version"]


def get_target_compute_version(target=None) -> str:
    """"9.0"-style compute capability of `target`'s arch, else of the visible device, else of sm_90a."""
    arch = re.search(r"sm_(\d+)", str(target or ""))
    if arch:
        digits = arch.group(1)
        return f"{digits[:-1]}.{digits[-1]}"
    try:
        import torch

        if torch.cuda.is_available():
            major, minor = torch.cuda.get_device_capability()
            return f"{major}.{minor}"
    except (ImportError, RuntimeError):
        pass
    return "9.0"


def parse_compute_version(compute_version) -> tuple[int, int]:
    """(major, minor) of "8.6"."""
    major, _, minor = str(compute_version).partition(".")
    return int(major), int(minor or 0)


def get_target_arch(compute_version) -> str:
    """"sm_90a" for "9.0" (the "a" features from sm_90 on), "sm_86" for "8.6"."""
    major, minor = parse_compute_version(compute_version) if not isinstance(compute_version, tuple) \
        else compute_version
    return f"sm_{major}{minor}" + ("a" if major >= 9 else "")


def have_fp16(compute_version) -> bool:
    """fp16 arithmetic (sm_53+)."""
    return parse_compute_version(compute_version) >= (5, 3)


def have_bf16(compute_version) -> bool:
    """bf16 arithmetic (sm_80+)."""
    return parse_compute_version(compute_version) >= (8, 0)


def have_fp8(compute_version) -> bool:
    """fp8 tensor cores (sm_89+)."""
    return parse_compute_version(compute_version) >= (8, 9)


def have_tensorcore(compute_version=None, target=None) -> bool:
    """Tensor cores (sm_70+)."""
    return parse_compute_version(compute_version or get_target_compute_version(target)) >= (7, 0)


def have_tma(target=None) -> bool:
    """TMA (sm_90+)."""
    return parse_compute_version(get_target_compute_version(target)) >= (9, 0)


def is_hopper(target=None) -> bool:
    """sm_90."""
    return parse_compute_version(get_target_compute_version(target))[0] == 9


def get_cuda_version(cuda_path=None) -> tuple[int, int]:
    """(major, minor) of the nvcc on PATH; (0, 0) without one."""
    import shutil
    import subprocess

    nvcc = shutil.which("nvcc")
    if nvcc is None:
        return (0, 0)
    out = subprocess.run([nvcc, "--version"], capture_output=True, text=True, timeout=30).stdout
    found = re.search(r"release (\d+)\.(\d+)", out)
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def _get_compile_timeout_seconds() -> float | None:
    """TileLang's parser of TILELANG_COMPILE_TIMEOUT_SECONDS: the bound every nvcc run here honours
    (`runtime.artifact.compile_timeout_seconds`)."""
    from ..runtime.artifact import compile_timeout_seconds

    return compile_timeout_seconds()
