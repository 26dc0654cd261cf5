"""T.cast's rounding options (round, sat, rbits): their check, shared by the kernel frontend and the host, and
T.cast of a Python number on the host, rounded to the target dtype as the options say."""
from __future__ import annotations

import bisect
import functools
import math
import re

# "" is the dtype's default conversion; rn/rz/ru/rd: to nearest even, toward zero, up, down; rs: stochastic
CAST_ROUNDING_MODES = ("", "rn", "rz", "ru", "rd", "rs")


def cast_option_error(round_mode, sat, rbits_given: bool) -> str | None:
    """What is wrong with T.cast's round/sat/rbits (TileLang's words), or None when they are valid."""
    if round_mode not in CAST_ROUNDING_MODES:
        return f"Invalid round mode {round_mode!r} for T.cast: use one of {', '.join(map(repr, CAST_ROUNDING_MODES))}"
    if not isinstance(sat, bool):
        return f"Invalid sat value {sat!r} for T.cast: use True (saturate to the dtype's range) or False"
    if round_mode == "rs" and not rbits_given:
        return "rbits is required with round='rs' for T.cast (the random bits of stochastic rounding)"
    if rbits_given and round_mode != "rs":
        return f"rbits is only valid with round='rs' for T.cast (got round={round_mode!r})"
    return None


def cast(value, dtype, round="", sat=True, rbits=None):  # noqa: A002 - TileLang's keyword
    """T.cast on the host: `value` (a Python number) converted to `dtype` with the given rounding; in a kernel body
    the frontend reads T.cast itself. ValueError for invalid options, as TileLang raises."""
    from .dtypes import normalize_dtype

    problem = cast_option_error(round, sat, rbits is not None)
    if problem is not None:
        raise ValueError(problem)
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise RuntimeError("T.cast of a symbolic value can only be used inside a @T.prim_func kernel body")
    if round == "rs":
        raise ValueError("round='rs' draws random bits on the device: use it in a kernel body, not on the host")
    name = normalize_dtype(dtype)
    if name is None:
        raise ValueError(f"T.cast to {dtype!r}: not a TileLang dtype")
    if name == "bool":
        return bool(value)
    if name.startswith(("int", "uint")):
        return _to_int(value, name, round, sat)
    return _to_float(float(value), name, round, sat)


def _to_int(value, name: str, mode: str, sat: bool) -> int:
    """An integer dtype: rounded by `mode` ("" truncates, as C does), saturated or wrapped to its width."""
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(f"T.cast of {value} to {name}: not a finite number")
    rounders = {"": math.trunc, "rz": math.trunc, "rd": math.floor, "ru": math.ceil, "rn": round}
    n = int(rounders[mode](value))
    bits = int(name.lstrip("uint") or 32)
    lo, hi = (0, 2 ** bits - 1) if name.startswith("u") else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    if sat:
        return min(max(n, lo), hi)
    n &= 2 ** bits - 1
    return n - 2 ** bits if n > hi else n


@functools.lru_cache(maxsize=None)
def _finite_values(name: str) -> tuple[tuple[float, int], ...]:
    """(value, bit pattern) of every finite value of a float dtype of at most 16 bits, ascending by value: read
    off all its bit patterns through torch, or worked out from the exponent/mantissa widths of a sub-byte float
    (all of whose patterns are finite)."""
    from .dtypes import DTYPES

    info = DTYPES[name]
    if info.bits < 8:
        exp, man = (int(c) for c in re.fullmatch(r"float\d+_e(\d)m(\d)\w*", name).groups())
        bias = 2 ** (exp - 1) - 1
        out = {}
        for code in range(2 ** (exp + man + 1)):
            e, m, negative = (code >> man) & (2 ** exp - 1), code & (2 ** man - 1), code >> (exp + man)
            magnitude = (m / 2 ** man) * 2.0 ** (1 - bias) if e == 0 else (1 + m / 2 ** man) * 2.0 ** (e - bias)
            out.setdefault(-magnitude if negative else magnitude, code)
        return tuple(sorted(out.items()))
    import torch

    dt = getattr(torch, info.torch)
    patterns = torch.arange(2 ** info.bits, dtype=torch.int32).to(torch.uint8 if info.bits == 8 else torch.int16)
    values = patterns.view(dt).double().tolist()
    out = {}
    for code, v in enumerate(values):
        if math.isfinite(v):
            out.setdefault(v, code)
    return tuple(sorted(out.items()))


def _to_float(value: float, name: str, mode: str, sat: bool) -> float:
    """A float dtype: the representable neighbour `mode` picks ("" and rn: the nearest, ties to the even bit
    pattern); out of range: the largest finite value with `sat`, else infinity (NaN for dtypes without one)."""
    import numpy as np

    if name == "float64" or math.isnan(value):
        return value
    if name == "float32":
        top = float(np.finfo(np.float32).max)
        if abs(value) > top:
            return math.copysign(top, value) if sat else math.copysign(math.inf, value)
        near = np.float32(value)
        other = np.nextafter(near, np.float32(math.copysign(math.inf, value - float(near))))
        pairs = sorted({(float(near), int(near.view(np.uint32))), (float(other), int(other.view(np.uint32)))})
    else:
        table = _finite_values(name)
        if value > table[-1][0] or value < table[0][0]:
            edge = table[-1][0] if value > 0 else table[0][0]
            return edge if sat else (math.copysign(math.inf, value) if _has_inf(name) else math.nan)
        k = bisect.bisect_left(table, (value, -1))
        pairs = [table[k]] if table[k][0] == value else [table[k - 1], table[k]]
    if len(pairs) == 1 or pairs[0][0] == value:
        return pairs[0][0]
    (down, down_code), (up, up_code) = pairs
    if mode == "rd":
        return down
    if mode == "ru":
        return up
    if mode == "rz":
        return down if value > 0 else up
    if value - down != up - value:
        return down if value - down < up - value else up
    return down if down_code % 2 == 0 else up


def _has_inf(name: str) -> bool:
    """True for the float dtypes that have infinities (not the fn/fnuz fp8 and fp4 ones)."""
    return not name.endswith(("fn", "fnuz", "fnu"))
