"""Calls into the CUDA driver (cuda-python): the error a refused call raises, and the check of each call's result."""
from __future__ import annotations


class LaunchError(Exception):
    """Arguments do not match the kernel, or the driver refused the launch."""


def checked(result):
    """The value of a driver call's (error, value) result; LaunchError naming the driver's error otherwise."""
    err = result[0] if isinstance(result, tuple) else result
    if int(err) != 0:
        from cuda.bindings import driver as cu

        name = cu.cuGetErrorName(err)[1]
        raise LaunchError(f"CUDA driver error {name.decode() if isinstance(name, bytes) else name}")
    return result[1] if isinstance(result, tuple) and len(result) == 2 else result
