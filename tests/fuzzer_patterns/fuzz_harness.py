"""Cases taken from the real TileLang's public fuzzer reports: one kernel, its inputs and a torch reference.

A theme module (`fuzz_<theme>.py`) lists `Case`s; its test module runs each on the CPU backend against torch and
lowers it to CUDA that nvcc compiles for sm_90a; `benchmarks/gpu_regressions.py` builds the same cases here and
runs them on a GPU. Nothing here imports tvm or pytest, so the GPU machine can load the tables.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass, field
from typing import Callable


@dataclass(frozen=True)
class Case:
    """One pattern: `source` is a TileLang file whose first kernel is the case; `inputs(device)` every argument
    in order (outputs pre-filled); `reference(args)` the expected values of the arguments at `outputs`."""

    name: str
    issue: str                      # the real TileLang report, e.g. "tile-ai/tilelang#2943"
    source: str
    inputs: Callable
    reference: Callable
    outputs: tuple = (-1,)
    atol: float = 0.0
    rtol: float = 0.0
    cuda: bool = True               # lowers for sm_90a (False: CPU-only semantics, said why in `note`)
    note: str = ""
    xfail: str = ""                 # why we still get it wrong (left as an expected failure)
    xfail_on: tuple = ("cpu", "cuda")  # the backends that still get it wrong
    tags: tuple = field(default_factory=tuple)


def compare(case: Case, args: list) -> str | None:
    """None when every output matches the reference (NaN matches NaN, inf matches inf), else a message."""
    import torch

    expected = case.reference([a.cpu() if hasattr(a, "cpu") else a for a in args])
    expected = expected if isinstance(expected, (list, tuple)) else [expected]
    for pos, want in zip(case.outputs, expected):
        got = args[pos].cpu()
        if got.dtype != want.dtype:
            want = want.to(got.dtype)
        if got.dtype.is_floating_point or got.dtype in (torch.float8_e4m3fn, torch.float8_e5m2):
            g, w = got.double(), want.double()
            same = torch.isclose(g, w, rtol=case.rtol, atol=case.atol, equal_nan=True) | (g == w)
        else:
            same = got == want
        if not bool(same.all()):
            bad = (~same).nonzero()[:4].tolist()
            return (f"{case.name}: output {pos} differs at {bad}: got "
                    f"{[got[tuple(i)].item() for i in bad]} want {[want[tuple(i)].item() for i in bad]}")
    return None


def kernel_ir(case: Case):
    """The case's tile IR, parsed statically from its source (raises on a diagnostic error)."""
    from tilelang_core import check_source

    res = check_source(HEADER + textwrap.dedent(case.source), f"<{case.name}>")
    if res.errors:
        raise AssertionError(f"{case.name}: {[d.message for d in res.errors]}")
    return res.kernels[0]


def run_cpu(case: Case) -> str | None:
    """Build the case for the CPU backend, run it on fresh inputs, compare with the reference."""
    from tilelang_core.codegen import cpu

    module = cpu.build(kernel_ir(case))
    args = case.inputs("cpu")
    module(*args)
    return compare(case, args)


HEADER = "import tilelang\nimport tilelang.language as T\n"
