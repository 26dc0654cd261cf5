"""Unsigned `+`, `-` and `*` that wrap modulo 2**bits, as in C and CUDA, on the CPU backend.

TVM's LLVM codegen marks 32- and 64-bit unsigned adds, subtractions and products `nuw` (no unsigned wrap), so
LLVM may fold a carry test such as `a + b < a` to false. uint32 arithmetic is therefore done in uint64 (where it
cannot wrap) and truncated; uint64 arithmetic in 32-bit halves. Narrower unsigned types carry no flag.
"""
from __future__ import annotations

from ..tvm_loader import load

_LOW = 0xFFFFFFFF


def wrapping(op: str, a, b, dtype: str):
    """`a op b` (op one of + - *) on two `dtype` (uint32 / uint64) tirx values, wrapping like C."""
    tirx = load().tirx
    if dtype == "uint32":
        wa, wb = tirx.Cast("uint64", a), tirx.Cast("uint64", b)
        if op == "+":
            out = tirx.Add(wa, wb)
        elif op == "-":
            out = tirx.Add(wa, tirx.Sub(tirx.const(1 << 32, "uint64"), wb))  # 2**32 - b >= 1: no wrap
        else:
            out = tirx.Mul(wa, wb)
        return tirx.Cast("uint32", out)
    if op == "+":
        return _add64(a, b)
    if op == "-":
        return _add64(a, _add64(tirx.bitwise_not(b), tirx.const(1, "uint64")))
    return _mul64(a, b)


def _halves(x):
    tirx = load().tirx
    return tirx.bitwise_and(x, tirx.const(_LOW, "uint64")), tirx.shift_right(x, tirx.const(32, "uint64"))


def _join(hi, lo):
    tirx = load().tirx
    low = tirx.const(_LOW, "uint64")
    return tirx.bitwise_or(tirx.shift_left(tirx.bitwise_and(hi, low), tirx.const(32, "uint64")),
                           tirx.bitwise_and(lo, low))


def _add64(a, b):
    """a + b mod 2**64 from 32-bit halves (every partial sum fits in 64 bits)."""
    tirx = load().tirx
    (alo, ahi), (blo, bhi) = _halves(a), _halves(b)
    lo = tirx.Add(alo, blo)
    hi = tirx.Add(tirx.Add(ahi, bhi), tirx.shift_right(lo, tirx.const(32, "uint64")))
    return _join(hi, lo)


def _mul64(a, b):
    """a * b mod 2**64: the low product plus the two cross products' low halves shifted up."""
    tirx = load().tirx
    (alo, ahi), (blo, bhi) = _halves(a), _halves(b)
    low = tirx.const(_LOW, "uint64")
    cross = tirx.Add(tirx.bitwise_and(tirx.Mul(alo, bhi), low), tirx.bitwise_and(tirx.Mul(ahi, blo), low))
    return _add64(tirx.Mul(alo, blo), _join(cross, tirx.const(0, "uint64")))
