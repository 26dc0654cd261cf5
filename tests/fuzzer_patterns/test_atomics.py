"""Atomic patterns from the real TileLang's fuzzer reports and the H200 colsum miscompile."""
from __future__ import annotations

import pytest
from fuzz_atomics import CASES
from fuzz_checks import check_cpu, nvcc_results, params

pytest.importorskip("torch")
pytestmark = pytest.mark.tvm


@pytest.mark.parametrize("case", params(CASES))
def test_cpu_matches_torch(case):
    check_cpu(case)


@pytest.fixture(scope="module")
def compiled():
    return nvcc_results([c for c in CASES if c.cuda])


@pytest.mark.nvcc
@pytest.mark.parametrize("case", params(CASES, cuda=True))
def test_lowers_and_compiles_for_sm90a(case, compiled):
    assert compiled[case.name] is None, compiled[case.name]


@pytest.mark.parametrize("case", params(CASES[:3]))
def test_replicated_atomic_runs_on_one_thread_per_iteration(case):
    """The atomic sits under a thread guard (before the fix every thread ran it: threads x the sum)."""
    from fuzz_harness import kernel_ir

    from tilelang_core.codegen.cuda import generate

    lines = generate(kernel_ir(case), "sm_90a").source.splitlines()
    at = next(k for k, line in enumerate(lines) if "tl::atomic_add((" in line)
    assert "threadIdx.x" in lines[at - 1] and lines[at - 1].strip().startswith("if"), lines[at - 3:at + 1]
