"""`tilelang.utils` and `tilelang.utils.tensor`: TensorSupplyType, input suppliers, torch_assert_close."""
from __future__ import annotations

from enum import Enum

from ..verify.testing import torch_assert_close

__all__ = ["TensorSupplyType", "get_tensor_supply", "torch_assert_close", "map_torch_type", "is_float8_dtype"]


class TensorSupplyType(Enum):
    """How profilers and autotuners fill a kernel's input tensors."""

    Integer = 1
    Uniform = 2
    Normal = 3
    Randn = 4
    Zero = 5
    One = 6
    Auto = 7


def get_tensor_supply(supply_type: TensorSupplyType = TensorSupplyType.Integer):
    """A function from a kernel parameter (`kernel.params[i]`) to a new tensor filled as `supply_type` says."""
    from ..runtime.profiler import supply_tensor

    def supply(param):
        shape = tuple(param.shape)
        if any(not isinstance(d, int) for d in shape):
            raise ValueError(f"parameter '{param.name}' has a symbolic shape {shape}: supply its tensor yourself")
        return supply_tensor(supply_type.name, shape, param.dtype, _device())

    return supply


def _device() -> str:
    import torch

    return "cuda" if torch.cuda.is_available() else "cpu"


def map_torch_type(dtype: str):
    """The torch dtype for a TileLang dtype name."""
    from ..runtime.numerics import torch_dtype

    return torch_dtype(str(dtype))


def is_float8_dtype(dtype) -> bool:
    """True for torch's float8 dtypes."""
    return "float8" in str(dtype)
