"""A minimal `tilelang.testing` for aliased TileLang files: seeded randomness, assert_close, skips, main()."""
from __future__ import annotations

import random
import sys


def set_random_seed(seed: int = 42) -> None:
    """Seed Python, numpy (when present) and torch."""
    random.seed(seed)
    try:
        import numpy as np

        np.random.seed(seed)
    except ImportError:
        pass
    import torch

    torch.manual_seed(seed)


def torch_assert_close(actual, expected, rtol: float = 1e-2, atol: float = 1e-2, max_mismatched_ratio: float = 0.001,
                       **kwargs) -> None:
    """Assert that two tensors agree within rtol/atol, allowing int(numel * max_mismatched_ratio) mismatched
    elements (TileLang's default ratio is 0.001)."""
    from ..runtime.numerics import compare

    res = compare(actual, expected.to(actual.dtype), rtol=rtol, atol=atol)
    if res.passed or res.mismatched <= int(res.total * max_mismatched_ratio):
        return
    raise AssertionError(res.message)


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def requires_cuda(func):
    """Skip the decorated test when no CUDA device is visible."""
    import pytest

    return pytest.mark.skipif(not _cuda(), reason="needs a CUDA device")(func)


def requires_cuda_compute_version_ge(major: int, minor: int = 0):
    """Skip unless the CUDA device's compute capability is at least major.minor."""
    import pytest

    def ok() -> bool:
        if not _cuda():
            return False
        import torch

        return torch.cuda.get_device_capability() >= (major, minor)

    return pytest.mark.skipif(not ok(), reason=f"needs compute capability >= {major}.{minor}")


def requires_cuda_compute_version_eq(major: int, minor: int = 0):
    """Skip unless the CUDA device's compute capability is exactly major.minor."""
    return _cc_mark(lambda cc: cc == (major, minor), f"== {major}.{minor}")


def requires_cuda_compute_version_lt(major: int, minor: int = 0):
    """Skip unless the CUDA device's compute capability is below major.minor."""
    return _cc_mark(lambda cc: cc < (major, minor), f"< {major}.{minor}")


def requires_cuda_compute_version_le(major: int, minor: int = 0):
    """Skip unless the CUDA device's compute capability is at most major.minor."""
    return _cc_mark(lambda cc: cc <= (major, minor), f"<= {major}.{minor}")


def requires_cuda_compute_version_gt(major: int, minor: int = 0):
    """Skip unless the CUDA device's compute capability is above major.minor."""
    return _cc_mark(lambda cc: cc > (major, minor), f"> {major}.{minor}")


requires_cuda_compute_version = requires_cuda_compute_version_ge


def requires_cuda_or_cdna(func):
    """Skip unless a CUDA device is visible (tilelang_core has no AMD CDNA backend, so only CUDA qualifies)."""
    return requires_cuda(func)


def requires_llvm(func):
    """Skip unless the installed tvm has its LLVM backend (the CPU backend's code generator)."""
    import pytest

    return pytest.mark.skipif(not _llvm(), reason="needs tvm built with LLVM")(func)


def _llvm() -> bool:
    try:
        import tvm
    except ImportError:
        return False
    return bool(tvm.runtime.enabled("llvm"))


def _never(device: str):
    """A decorator that skips its test: `device` is not a tilelang_core target."""

    def decorate(func):
        import pytest

        return pytest.mark.skip(reason=f"needs {device}, which tilelang_core does not target")(func)

    decorate.__name__ = "requires_" + device.split()[0].lower()
    decorate.__doc__ = f"Skip the decorated test: {device} is not a tilelang_core target."
    return decorate


requires_rocm = _never("ROCm (an AMD GPU)")
requires_cdna = _never("CDNA (an AMD Instinct GPU)")
requires_gfx950 = _never("gfx950 (an AMD MI350 GPU)")
requires_metal = _never("Metal (an Apple GPU)")


def _cc_mark(pred, text: str):
    import pytest

    ok = False
    if _cuda():
        import torch

        ok = pred(torch.cuda.get_device_capability())
    return pytest.mark.skipif(not ok, reason=f"needs compute capability {text}")


def requires_package(*names):
    """Skip unless every named package is importable."""
    import importlib.util

    import pytest

    missing = [n for n in names if importlib.util.find_spec(n) is None]
    return pytest.mark.skipif(bool(missing), reason=f"needs {', '.join(missing)}")


def process_func(func, *args, **kwargs):
    """Call a test function (TileLang's helper for running parametrised checks)."""
    return func(*args, **kwargs)


def main() -> None:
    """Run every `test_*` function of the calling `__main__` module and report failures."""
    module = sys.modules["__main__"]
    failed = 0
    for name in sorted(n for n in dir(module) if n.startswith("test_")):
        fn = getattr(module, name)
        if not callable(fn):
            continue
        try:
            fn()
            print(f"PASSED {name}")
        except Exception as exc:  # report every test, not just the first failure
            failed += 1
            print(f"FAILED {name}: {type(exc).__name__}: {exc}")
    if failed:
        raise SystemExit(1)
