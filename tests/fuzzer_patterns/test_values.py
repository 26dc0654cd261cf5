"""Reduction, cast and half-precision math patterns from the real TileLang's fuzzer reports."""
from __future__ import annotations

import pytest
from fuzz_values import CASES
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
