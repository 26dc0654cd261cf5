"""Every fuzzer-pattern case (the CASES tables of fuzz_<theme>.py, from the real TileLang's fuzzer reports and the
H200 colsum miscompile): CPU numerics against torch, and CUDA for sm_90a that nvcc compiles."""
from __future__ import annotations

import functools
import importlib

import pytest
from fuzz_checks import check_cpu, nvcc_results, params

pytest.importorskip("torch")
pytestmark = pytest.mark.tvm

THEMES = ("fuzz_arith", "fuzz_atomics", "fuzz_control", "fuzz_fp8", "fuzz_gemm", "fuzz_values", "fuzz_layouts",
          "fuzz_rng")


def _cases(*themes: str) -> list:
    return [case for theme in themes for case in importlib.import_module(theme).CASES]


def _params(cuda: bool = False) -> list:
    return [pytest.param(theme, *p.values, id=f"{theme.removeprefix('fuzz_')}-{p.id}", marks=p.marks)
            for theme in THEMES for p in params(_cases(theme), cuda=cuda)]


@functools.lru_cache(maxsize=None)
def _compiled(theme: str) -> dict:
    """nvcc results of one theme's CUDA cases, built once per test process."""
    return nvcc_results([c for c in _cases(theme) if c.cuda])


@pytest.mark.parametrize("theme,case", _params())
def test_cpu_matches_torch(theme, case):
    check_cpu(case)


@pytest.mark.nvcc
@pytest.mark.parametrize("theme,case", _params(cuda=True))
def test_lowers_and_compiles_for_sm90a(theme, case):
    assert _compiled(theme)[case.name] is None, _compiled(theme)[case.name]


def test_k_tile_not_a_multiple_of_16_is_refused_with_a_message():
    """Upstream dropped the K tail silently; the CUDA lowering says why it cannot lower the kernel."""
    from fuzz_harness import kernel_ir

    from tilelang_core.codegen.cuda import generate
    from tilelang_core.codegen.cuda.common import LoweringError

    case = next(c for c in _cases("fuzz_gemm", "fuzz_layouts") if not c.cuda)
    with pytest.raises(LoweringError, match="multiple of 16"):
        generate(kernel_ir(case), "sm_90a")


@pytest.mark.parametrize("case", params(_cases("fuzz_atomics")[:3]))
def test_replicated_atomic_runs_on_one_thread_per_iteration(case):
    """The atomic sits under a thread guard (before the fix every thread ran it: threads x the sum)."""
    from fuzz_harness import kernel_ir

    from tilelang_core.codegen.cuda import generate

    lines = generate(kernel_ir(case), "sm_90a").source.splitlines()
    at = next(k for k, line in enumerate(lines) if "tl::atomic_add((" in line)
    assert "threadIdx.x" in lines[at - 1] and lines[at - 1].strip().startswith("if"), lines[at - 3:at + 1]


@pytest.mark.tvm
def test_integer_reductions_accumulate_in_their_integer_type_on_cuda():
    """uint32 absmax/abssum past 2**24 came back rounded on the H200: the CUDA reduction accumulated in float32."""
    from fuzz_harness import kernel_ir

    from tilelang_core.codegen.cuda import generate

    case = next(c for c in _cases("fuzz_values") if "absmax/abssum" in c.name and "uint32" in c.source)
    body = generate(kernel_ir(case), "sm_90a").source.split("__global__", 2)[2]
    assert "float" not in body and "uint red_acc" in body.replace("alignas(64) ", "")
