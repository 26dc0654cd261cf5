"""The dtype table and normalize_dtype."""
from __future__ import annotations

import subprocess
import sys

import pytest

from tilelang_core.language.dtypes import (
    DTYPES,
    closest_dtype,
    dtype_bits,
    dtype_info,
    is_dtype_name,
    normalize_dtype,
)
from tilelang_core.language.types import DType


@pytest.mark.parametrize("spelling, expected", [
    ("float16", "float16"), ("half", "float16"), ("T.float16", "float16"), (DType("bfloat16"), "bfloat16"),
    ("float", "float32"), ("double", "float64"), ("int", "int32"), ("long", "int64"), ("short", "int16"),
    ("e4m3_float8", "float8_e4m3"), ("float8_e5m2", "float8_e5m2"), ("float16x2", "float16x2"),
    (float, "float32"), (int, "int32"), (bool, "bool"),
    ("half16", None), ("", None), (None, None), (3, None), ("float16x", None),
])
def test_normalize(spelling, expected):
    assert normalize_dtype(spelling) == expected


def test_torch_dtypes_normalize():
    torch = pytest.importorskip("torch")
    assert normalize_dtype(torch.float16) == "float16"
    assert normalize_dtype(torch.bfloat16) == "bfloat16"
    assert normalize_dtype(torch.int8) == "int8"
    for info in DTYPES.values():
        if info.torch:
            assert hasattr(torch, info.torch), info.name


def test_bits_and_kinds():
    assert dtype_bits("float16") == 16 and dtype_bits(DType("float8_e4m3fn")) == 8
    assert dtype_bits("int4") == 4 and dtype_info("int4").bytes == 0.5
    assert dtype_bits("float32x4") == 128
    assert dtype_info("bfloat16").is_float and not dtype_info("int32").is_float
    assert dtype_info("uint8").kind == "uint" and dtype_info("bool").kind == "bool"
    assert dtype_bits("nonsense") is None


def test_attribute_names_and_suggestions():
    assert is_dtype_name("half") and is_dtype_name("float8_e4m3fn") and not is_dtype_name("copy")
    assert closest_dtype("flaot16") == "float16"
    assert closest_dtype("bfloat61") == "bfloat16"
    assert closest_dtype("zzzz") is None


def test_no_torch_import():
    code = "import sys, tilelang_core.language.dtypes as d; d.normalize_dtype('half'); print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_numpy_dtypes_normalize():
    np = pytest.importorskip("numpy")
    assert normalize_dtype(np.float16) == "float16" and normalize_dtype(np.dtype("int8")) == "int8"
    assert normalize_dtype(np.bool_) == "bool" and normalize_dtype(np.float32) == "float32"


def test_float4_predicates_cover_packed_vectors_and_unpacked_by_any_spelling():
    from tilelang_core.language.dtypes import is_float4, is_float4_e2m1_unpacked, is_float4_e2m1fn

    assert is_float4("float4_e2m1fn") and is_float4("float4_e2m1fnx2") and is_float4("float4_e2m1_unpacked")
    assert is_float4("custom[float4_e2m1_unpacked]8") and not is_float4("float16") and not is_float4("nonsense")
    assert is_float4_e2m1fn("float4_e2m1fnx2") and not is_float4_e2m1fn("float4_e2m1_unpacked")
    assert is_float4_e2m1_unpacked("custom[float4_e2m1_unpacked]8") and not is_float4_e2m1_unpacked("float4_e2m1fn")
    assert normalize_dtype("custom[float4_e2m1_unpacked]8") == "float4_e2m1_unpacked"
    assert normalize_dtype("float4_e2m1_unpackedx2") is None and normalize_dtype("float4_e2m1fnx2") == "float4_e2m1fnx2"


def test_dtype_values_answer_float4_questions_and_packed_fp4_maps_to_torch_storage():
    import tilelang_core.language as T

    assert T.float4_e2m1fn.is_float4_e2m1fn() and T.float4_e2m1fnx2.is_float4()
    assert T.float4_e2m1_unpacked.is_float4_e2m1_unpacked() and not T.float16.is_float4()
    assert not hasattr(T, "float4_e2m1_unpackedx2")
    torch = pytest.importorskip("torch")
    if hasattr(torch, "float4_e2m1fn_x2"):
        assert T.float4_e2m1fn.as_torch() is torch.float4_e2m1fn_x2
        assert T.float4_e2m1fnx2.as_torch() is torch.float4_e2m1fn_x2
    with pytest.raises(TypeError, match="has no torch dtype"):
        T.float4_e2m1fnx4.as_torch()


def test_dtype_values_are_tvm_datatypes_once_tvm_is_loaded():
    """TileLang's T.<dtype> are tvm DataType instances; ours are too once tvm-ffi is loaded (before it, light
    strings that compare equal, so `T.float16` alone imports neither tvm nor torch)."""
    pytest.importorskip("tvm_ffi")
    import pickle

    import tvm_ffi

    import tilelang_core.language as T
    from tilelang_core.language.dtypes import DTYPES

    for name in DTYPES:
        value = getattr(T, name)
        assert isinstance(value, tvm_ffi.dtype), name
        assert normalize_dtype(value) == name and pickle.loads(pickle.dumps(value)) == value
    assert T.dtype("half") == T.float16 and isinstance(T.dtype("half"), tvm_ffi.dtype) and T.float16(2.5) == 2.5
    unpacked = T.float4_e2m1_unpacked
    assert (unpacked.bits, int(unpacked.type_code), str(unpacked), unpacked.lanes) == (
        8, 131, "custom[float4_e2m1_unpacked]8", 1)
    assert unpacked.is_float4_e2m1_unpacked() and T.float4_e2m1fn.bits == 4 and unpacked != T.float4_e2m1fn
    assert tvm_ffi.dtype("custom[float4_e2m1_unpacked]8").type_code == 131  # registered with tvm-ffi
    assert T.tfloat32 == "tfloat32" and T.tfloat32.bits == 32 and T.float32x4.bits == 32 and T.float32x4.lanes == 4


def test_vector_dtype_bits_count_one_lane_before_tvm_is_loaded_too():
    code = ("import sys, tilelang_core.language as T; "
            "print(type(T.float16x2).__name__, T.float16x2.bits, T.float16x2.lanes, 'tvm_ffi' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["DTypeValue", "16", "2", "False"]
