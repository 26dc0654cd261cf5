"""The profiler's input tensors follow TileLang's TensorSupplyType semantics (files' checks depend on them)."""
import pytest
import torch

from tilelang_core.runtime.profiler import supply_tensor


def _t(supply, dtype, shape=(4096,)):
    return supply_tensor(supply, shape, dtype, "cpu", torch.Generator().manual_seed(1))


def test_auto_floats_are_uniform_in_minus_one_one():
    x = _t("Auto", "float32")
    assert x.min() >= -1 and x.max() < 1 and x.min() < -0.9 and x.max() > 0.9


def test_auto_ints_unsigned_bool_and_fp8():
    assert set(_t("Auto", "int32").unique().tolist()) <= {-2, -1, 0, 1, 2}
    assert set(_t("Auto", "uint8").unique().tolist()) == {0, 1, 2}
    assert set(_t("Auto", "bool").unique().tolist()) == {False, True}
    f8 = _t("Auto", "float8_e4m3fn").float()
    assert f8.min() <= -100 and f8.max() >= 100 and f8.abs().max() <= 128


def test_normal_has_mean_minus_one_and_uniform_is_symmetric():
    n = _t("Normal", "float32", (20000,))
    assert abs(n.mean().item() + 1) < 0.05 and abs(n.std().item() - 1) < 0.05
    u = _t("Uniform", "float16", (20000,)).float()
    assert u.min() >= -1 and u.max() <= 1 and abs(u.mean().item()) < 0.05  # fp16 rounds values near 1 to 1


def test_int8_under_uniform_or_normal_is_ones_and_integer_floats_are_small_ints():
    assert (_t("Normal", "int8") == 1).all() and (_t("Uniform", "int8") == 1).all()
    assert set(_t("Integer", "float16").unique().tolist()) <= {-2.0, -1.0, 0.0, 1.0, 2.0}


def test_randn_zero_one_and_unknown():
    r = _t("Randn", "float32", (20000,))
    assert abs(r.mean().item()) < 0.05 and abs(r.std().item() - 1) < 0.05
    assert (_t("Zero", "float32") == 0).all() and (_t("One", "bfloat16") == 1).all()
    with pytest.raises(ValueError, match="unknown TensorSupplyType"):
        _t("Gaussian", "float32")
