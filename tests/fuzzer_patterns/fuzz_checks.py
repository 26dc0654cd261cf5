"""The two checks every pattern gets: CPU numerics against torch, and CUDA for sm_90a that nvcc compiles."""
from __future__ import annotations

from fuzz_harness import Case, kernel_ir, run_cpu


def check_cpu(case: Case) -> None:
    """The CPU backend computes the reference result."""
    err = run_cpu(case)
    assert err is None, err


def nvcc_results(cases) -> dict:
    """{case name: None, or why it did not lower or compile}: each case lowered for sm_90a (one at a time: TVM),
    then compiled by nvcc two at a time."""
    from concurrent.futures import ThreadPoolExecutor

    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    sources = {}
    for case in cases:
        try:
            sources[case.name] = generate(kernel_ir(case), "sm_90a").source
        except Exception as exc:  # noqa: BLE001 - reported by the case's test
            sources[case.name] = exc

    def build(item):
        name, src = item
        if isinstance(src, Exception):
            return name, f"lowering failed: {src}"
        try:
            return name, None if compile_cubin(src, "sm_90a")[:4] == b"\x7fELF" else "not an ELF cubin"
        except Exception as exc:  # noqa: BLE001
            return name, str(exc)[-1500:]

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(build, sources.items()))


def params(cases, cuda: bool = False) -> list:
    """pytest params for the cases (only those that lower for CUDA when `cuda`); known wrong numerics as xfail."""
    import pytest

    return [pytest.param(c, id=c.name, marks=[pytest.mark.xfail(reason=c.xfail, strict=True)] if c.xfail and "cpu" in c.xfail_on and not cuda
                         else [])
            for c in cases if c.cuda or not cuda]
