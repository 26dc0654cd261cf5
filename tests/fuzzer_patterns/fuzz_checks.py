"""The two checks every pattern gets: CPU numerics against torch, and CUDA for sm_90a that nvcc compiles."""
from __future__ import annotations

from fuzz_harness import Case, kernel_ir, run_cpu


def check_cpu(case: Case) -> None:
    """The CPU backend computes the reference result."""
    err = run_cpu(case)
    assert err is None, err


def check_nvcc(case: Case) -> None:
    """The case lowers to CUDA that nvcc accepts for sm_90a."""
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    src = generate(kernel_ir(case), "sm_90a").source
    assert compile_cubin(src, "sm_90a")[:4] == b"\x7fELF"


def params(cases, cuda: bool = False) -> list:
    """pytest params for the cases (only those that lower for CUDA when `cuda`); known wrong numerics as xfail."""
    import pytest

    return [pytest.param(c, id=c.name, marks=[pytest.mark.xfail(reason=c.xfail, strict=True)] if c.xfail and not cuda else [])
            for c in cases if c.cuda or not cuda]
