"""T.cast's rounding options: checked with TileLang's words on the host and at the user's line in a kernel, and
T.cast of a number on the host rounded as asked (against torch's conversions and the e2m1 value table)."""
from __future__ import annotations

import math

import pytest

from tilelang_core.language import cast
from tilelang_core.language.cast_rounding import CAST_ROUNDING_MODES

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("kwargs,message", [
    ({"round": "invalid"}, "Invalid round mode"), ({"sat": "yes"}, "Invalid sat value"),
    ({"round": "rs"}, "rbits is required"), ({"round": "rn", "rbits": 42}, "rbits is only valid"),
])
def test_invalid_options_raise_value_error(kwargs, message):
    with pytest.raises(ValueError, match=message):
        cast(1.0, "float8_e4m3fn", **kwargs)


@pytest.mark.parametrize("dtype", ["float8_e4m3fn", "float8_e5m2", "float16", "bfloat16"])
def test_nearest_matches_torch_and_directed_modes_bracket_it(dtype):
    gen = torch.Generator().manual_seed(0)
    values = (torch.randn(200, generator=gen, dtype=torch.float64) * 3).tolist()
    for v in values:
        expected = torch.tensor(v, dtype=torch.float64).to(getattr(torch, dtype)).double().item()
        assert cast(v, dtype) == expected == cast(v, dtype, round="rn")
        down, up = cast(v, dtype, round="rd"), cast(v, dtype, round="ru")
        assert down <= v <= up and expected in (down, up)
        assert cast(v, dtype, round="rz") == (down if v > 0 else up)


def test_fp4_values_saturation_and_integers():
    assert [cast(x, "float4_e2m1fn") for x in (0.3, 0.25, 0.75, 2.5, 5.0, 7.0, -100.0)] == \
        [0.5, 0.0, 1.0, 2.0, 4.0, 6.0, -6.0]
    assert cast(2.6, "float4_e2m1fn", round="rd") == 2.0 and cast(2.1, "float4_e2m1fn", round="ru") == 3.0
    assert math.isnan(cast(7.0, "float4_e2m1fn", sat=False))
    assert cast(1e6, "float8_e5m2", sat=False) == math.inf and cast(1e6, "float8_e5m2") == 57344.0
    assert [cast(2.5, "int8", round=m) for m in ("", "rn", "ru", "rd")] == [2, 2, 3, 2]
    assert cast(300, "int8") == 127 and cast(300, "int8", sat=False) == 44 and cast(-3.7, "uint8") == 0
    assert cast(1.0 + 2 ** -30, "float32", round="ru") == 1.0 + 2 ** -23


def test_every_mode_but_rs_runs_on_the_host():
    for mode in CAST_ROUNDING_MODES:
        if mode != "rs":
            assert cast(1.0, "float8_e4m3fn", round=mode) == 1.0


KERNEL = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((32,), T.float32), B: T.Tensor((32,), T.float8_e4m3fn)):
    with T.Kernel(1, threads=32) as _:
        tx = T.get_thread_binding()
        B[tx] = {cast}
"""


@pytest.mark.parametrize("call,code,message", [
    ('T.cast(A[tx], "float8_e4m3fn", round="bad")', "bad-arguments", "Invalid round mode 'bad'"),
    ('T.cast(A[tx], "float8_e4m3fn", round="rs")', "bad-arguments", "rbits is required"),
    ('T.cast(A[tx], "float8_e4m3fn", round="rz")', "lowering-unsupported", "round='rz') to float8_e4m3fn"),
    ('T.cast(A[tx], "int32", round="rn")', "lowering-unsupported", "round='rn') to int32"),
])
def test_kernel_options_are_checked_at_the_call(call, code, message):
    from tilelang_core import check_source

    res = check_source(KERNEL.format(cast=call), "<test>")
    assert [d.code for d in res.errors] == [code] and message in res.errors[0].message
    assert res.errors[0].span.line == 8


def test_default_and_nearest_casts_are_accepted_in_a_kernel():
    from tilelang_core import check_source

    for call in ('T.cast(A[tx], "float8_e4m3fn")', 'T.cast(A[tx], "float8_e4m3fn", round="rn", sat=True)'):
        assert not check_source(KERNEL.format(cast=call), "<test>").errors
