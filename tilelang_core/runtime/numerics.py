"""Numerics for verification: random inputs by dtype, tolerances by dtype, and output comparison."""
from __future__ import annotations

from dataclasses import dataclass

# (rtol, atol) used when the caller gives none: half types get 1e-2, fp32 1e-5 (relative), ints exact
_TOL = {"float16": (1e-2, 1e-2), "bfloat16": (1e-2, 1e-2), "float32": (1e-5, 1e-5), "float64": (1e-7, 1e-7)}


def torch_dtype(name: str):
    """The torch dtype for a TileLang dtype name (ValueError when torch has none)."""
    import torch

    from ..language.dtypes import DTYPES

    info = DTYPES.get(name)
    attr = info.torch if info is not None else None
    if attr is None or not hasattr(torch, attr):
        raise ValueError(f"dtype {name!r} has no torch equivalent; the JIT cannot pass such tensors")
    return getattr(torch, attr)


def tolerance(dtype: str) -> tuple[float, float]:
    """Default (rtol, atol) for comparing outputs of `dtype`."""
    if dtype.startswith("float8"):
        return (1.25e-1, 1.25e-1)
    return _TOL.get(dtype, (0.0, 0.0))


@dataclass
class Comparison:
    """The result of comparing one output with its reference (max_rel_err = max |a - e| / max |e|)."""

    max_abs_err: float
    max_rel_err: float
    passed: bool
    mismatched: int = 0
    total: int = 0
    message: str = ""


def compare(actual, expected, rtol: float | None = None, atol: float | None = None, name: str = "output",
            scale_atol: bool = False) -> Comparison:
    """Compare two tensors elementwise with |a - e| <= atol + rtol * |e|; NaN where the reference is finite fails.

    scale_atol multiplies atol by max(1, max |e|), so cancellation near zero in large outputs (a dot product
    of fp16 values) is judged relative to the output's magnitude, as `verify` does.
    """
    import torch

    if tuple(actual.shape) != tuple(expected.shape):
        return Comparison(float("inf"), float("inf"), False, message=(
            f"{name} has shape {tuple(actual.shape)} but the reference returned {tuple(expected.shape)}"))
    d_rtol, d_atol = tolerance(str(actual.dtype).replace("torch.", ""))
    rtol = d_rtol if rtol is None else rtol
    atol = d_atol if atol is None else atol
    a = actual.detach().to("cpu", torch.float64)
    e = expected.detach().to("cpu", torch.float64)
    if a.numel() == 0:
        return Comparison(0.0, 0.0, True)
    diff = (a - e).abs()
    both_nan = torch.isnan(a) & torch.isnan(e)
    same_inf = torch.isinf(a) & torch.isinf(e) & (a == e)
    diff = torch.where(both_nan | same_inf, torch.zeros_like(diff), diff)
    diff = torch.where(torch.isnan(diff), torch.full_like(diff, float("inf")), diff)
    ref_max = float(torch.nan_to_num(e.abs(), posinf=0.0).max())
    if scale_atol:
        atol = atol * max(1.0, ref_max)
    bad = diff > atol + rtol * e.abs()
    max_abs = float(diff.max())
    max_rel = max_abs / max(ref_max, 1e-12)  # normalised by max |ref|
    n_bad, total = int(bad.sum()), a.numel()
    passed = n_bad == 0
    msg = "" if passed else _mismatch_message(name, bad, a, e, n_bad, total, rtol, atol)
    return Comparison(max_abs, max_rel, passed, n_bad, total, msg)


def _mismatch_message(name, bad, a, e, n_bad, total, rtol, atol) -> str:
    import torch

    first = tuple(int(i) for i in torch.nonzero(bad)[0].tolist())
    return (f"{name}: {n_bad} of {total} elements differ beyond rtol={rtol:g}, atol={atol:g}; "
            f"first at {first}: got {float(a[first]):.6g}, expected {float(e[first]):.6g}")
