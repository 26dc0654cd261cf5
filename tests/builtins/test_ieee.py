"""T.ieee_* on the CPU backend are IEEE-exact in every rounding mode (checked against exact rationals), 16-bit
floats round to nearest on both backends, and the unsupported combinations are refused at the call."""
from __future__ import annotations

import itertools
import textwrap
from fractions import Fraction

import pytest

from tilelang_core import check_source

SRC = """
import tilelang.language as T

@T.prim_func
def k(A: T.Tensor((64,), T.{dt}), B: T.Tensor((64,), T.{dt}), D: T.Tensor((64,), T.{dt}),
      C: T.Tensor((64,), T.{dt})):
    with T.Kernel(1, threads=64):
        for i in T.Parallel(64):
            C[i] = {call}
"""

CALLS = {"add": "T.ieee_add(A[i], B[i], '{m}')", "mul": "T.ieee_mul(A[i], B[i], '{m}')",
         "fdiv": "T.ieee_fdiv(A[i], B[i], '{m}')", "fmaf": "T.ieee_fmaf(A[i], B[i], D[i], '{m}')",
         "frcp": "T.ieee_frcp(A[i], '{m}')"}
EXACT = {"add": lambda a, b, d: a + b, "mul": lambda a, b, d: a * b, "fdiv": lambda a, b, d: a / b,
         "fmaf": lambda a, b, d: a * b + d, "frcp": lambda a, b, d: 1 / a}


def _kernel(src: str):
    res = check_source(textwrap.dedent(src), "<test>")
    assert not res.errors, [d.message for d in res.errors]
    return res.kernels[0]


def _rounded(z: float, exact: Fraction, mode: str, np_t) -> bool:
    import numpy as np

    zf = Fraction(z)
    up, down = (Fraction(float(np.nextafter(np_t(z), np_t(s * np.inf)))) for s in (1, -1))
    if mode == "rn":
        return abs(zf - exact) <= min(abs(up - exact), abs(down - exact))
    if mode == "ru":
        return zf >= exact > down
    if mode == "rd":
        return zf <= exact < up
    return abs(zf) <= abs(exact) < abs(up if z > 0 else down)


@pytest.mark.tvm
@pytest.mark.parametrize("dt,op,mode", list(itertools.product(["float32", "float64"], CALLS, ["rn", "rz", "ru", "rd"])))
def test_ieee_ops_round_exactly_on_the_cpu(dt, op, mode):
    torch = pytest.importorskip("torch")
    np = pytest.importorskip("numpy")
    from tilelang_core.codegen import cpu

    tdt = getattr(torch, dt)
    gen = torch.Generator().manual_seed(7)
    a, b, d = (torch.randn(64, generator=gen, dtype=tdt) + 2 for _ in range(3))
    c = torch.zeros(64, dtype=tdt)
    cpu.build(_kernel(SRC.format(dt=dt, call=CALLS[op].format(m=mode))))(a, b, d, c)
    np_t = np.float32 if dt == "float32" else np.float64
    bad = [(x, y, w, z) for x, y, w, z in zip(a.tolist(), b.tolist(), d.tolist(), c.tolist())
           if not _rounded(z, EXACT[op](Fraction(x), Fraction(y), Fraction(w)), mode, np_t)]
    assert not bad, bad[:3]


@pytest.mark.tvm
@pytest.mark.nvcc
def test_half_precision_ieee_ops_compile_for_sm90a():
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    ck = generate(_kernel(SRC.format(dt="bfloat16", call="T.ieee_fmaf(A[i], B[i], D[i], 'rn')")), "sm_90a")
    assert "__fmaf_rn(" in ck.source and compile_cubin(ck.source, "sm_90a")[:4] == b"\x7fELF"


@pytest.mark.parametrize("dt,call,words", [
    ("float16", "T.ieee_add(A[i], B[i], 'rz')", "Only rounding mode 'rn' is available for half precision"),
    ("float64", "T.ieee_frsqrt(A[i])", "frsqrt is not supported for float64"),
])
def test_unsupported_ieee_combinations_are_refused(dt, call, words):
    errs = check_source(textwrap.dedent(SRC.format(dt=dt, call=call)), "<test>").errors
    assert errs and words in errs[0].message and errs[0].span.line == 9


def test_an_invalid_rounding_mode_is_a_value_error_even_outside_a_kernel():
    import tilelang_core.language as T

    with pytest.raises(ValueError, match="Invalid rounding mode"):
        T.ieee_mul(1.0, 2.0, "xy")
    with pytest.raises(RuntimeError, match="inside a @T.prim_func"):
        T.ieee_mul(1.0, 2.0, "rz")
