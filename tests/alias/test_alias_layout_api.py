"""The layout names TileLang's tests import under the alias: tilelang.layout.cute, the host bank swizzles,
tilelang.cuda.intrinsics.make_mma_swizzle_layout (other intrinsics stay importable and refuse the call) and
tilelang._ffi_api.Layout_repeat."""
from __future__ import annotations


import pytest


def test_layout_submodules_resolve(tilelang):
    from tilelang.layout import cute
    from tilelang.layout.swizzle import make_half_bank_swizzled_layout

    assert cute.size(cute.make_layout((4, 8))) == 32
    layout = make_half_bank_swizzled_layout(type("Buf", (), {"shape": (8, 32), "dtype": "float16"})())
    assert layout.get_output_shape() == [1, 1, 256]


def test_cuda_intrinsics_serves_the_mma_swizzles_and_refuses_the_rest(tilelang):
    from tilelang.cuda.intrinsics import get_swizzle_layout, make_mma_swizzle_layout
    from tilelang.cuda.intrinsics.mma_layout import ldmatrix_32x8_to_shared_16x16_layout
    from tilelang.cuda.intrinsics.sparse_layout import get_e_factor  # noqa: F401 -- its own alias still applies
    from tilelang_core.compat import UnsupportedFeatureError

    buf = type("Buf", (), {"shape": (16, 64), "dtype": "float16"})()
    assert make_mma_swizzle_layout(buf).get_input_shape() == [16, 64]
    assert get_swizzle_layout(0, 9, 64, "float16") == (0, 9) and get_swizzle_layout(1, 0, 64, "float16") == (1, 8)
    with pytest.raises(UnsupportedFeatureError):
        ldmatrix_32x8_to_shared_16x16_layout(0, 0)


def test_ffi_layout_repeat_raises_value_error(tilelang):
    from tilelang import _ffi_api
    from tilelang.layout import Layout

    atom = Layout([8, 64], lambda i, j: i * 64 + j)
    assert _ffi_api.Layout_repeat(atom, 1, 3).get_input_shape() == [8, 192]
    with pytest.raises(ValueError):
        _ffi_api.Layout_repeat(atom, -3, 2)
