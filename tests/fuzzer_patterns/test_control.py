"""Loop, branch, copy and fill patterns from the real TileLang's fuzzer reports."""
from __future__ import annotations

import pytest
from fuzz_control import CASES
from fuzz_checks import check_cpu, check_nvcc, params

pytest.importorskip("torch")
pytestmark = pytest.mark.tvm


@pytest.mark.parametrize("case", params(CASES))
def test_cpu_matches_torch(case):
    check_cpu(case)


@pytest.mark.nvcc
@pytest.mark.parametrize("case", params(CASES, cuda=True))
def test_lowers_and_compiles_for_sm90a(case):
    check_nvcc(case)
