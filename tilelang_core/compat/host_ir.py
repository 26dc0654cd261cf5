"""Builtins called on the host with TVM IR operands (a `tvm.tirx.Var`, an expression built from one): the TVM
expression TileLang builds there. The fast-math family (`T.__exp(x)`, ...) is a call of the TileLang intrinsic
(`tl.__exp`) in the operand's dtype, once the stub has checked that dtype (language/arg_checks.py).

Whoever made the operand imported tvm already; this module reaches it through codegen/tvm_loader.py, and nothing on the
check path calls it (the frontend reads builtins in kernel bodies from the source, never through these)."""
from __future__ import annotations

from ..language.arg_checks import FAST_MATH, value_dtype


def host_builder(short: str):
    """The host-side builder of `T.<short>` on TVM IR operands, or None when tilelang_core builds none."""
    if short in FAST_MATH:
        return lambda x: _fast_math(short, x)
    return None


def _fast_math(short: str, x):
    """`T.__exp(x)` on a TVM expression: Call(tl.__exp, x) of x's dtype."""
    from ..codegen.tvm_loader import load

    return load().tirx.call_pure_extern(str(value_dtype(x)), f"tl.{short}", x)
