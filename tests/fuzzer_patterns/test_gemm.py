"""T.gemm patterns from the real TileLang's fuzzer reports (CPU numerics, nvcc sm_90a)."""
from __future__ import annotations

import pytest
from fuzz_gemm import CASES
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


def test_k_tile_not_a_multiple_of_16_is_refused_with_a_message():
    """Upstream dropped the K tail silently; the CUDA lowering says why it cannot lower the kernel."""
    from fuzz_harness import kernel_ir

    from tilelang_core.codegen.cuda import generate
    from tilelang_core.codegen.cuda_lower import LoweringError

    case = next(c for c in CASES if not c.cuda)
    with pytest.raises(LoweringError, match="multiple of 16"):
        generate(kernel_ir(case), "sm_90a")
