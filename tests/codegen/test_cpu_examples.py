"""Every example in examples/ runs on the CPU backend (through the tilelang alias) and matches its ref_program;
the GEMM and elementwise factories also run with shapes that are not multiples of their tiles."""
from __future__ import annotations

import runpy

import pytest

from tests.conftest import EXAMPLES

torch = pytest.importorskip("torch")
pytestmark = [pytest.mark.tvm, pytest.mark.usefixtures("tilelang_alias")]

REQUIRED = ["gemm", "gemm_bf16", "gemm_transposed_b", "elementwise_add", "softmax", "rmsnorm", "flash_attention",
            "dequant_gemm"]
NAMES = sorted({p.stem for p in EXAMPLES.glob("*.py")} | set(REQUIRED))
_MODULES: dict = {}


def module(name: str) -> dict:
    """The example's globals, executed once (not as __main__)."""
    if name not in _MODULES:
        _MODULES[name] = runpy.run_path(str(EXAMPLES / f"{name}.py"), run_name=f"example_{name}")
    return _MODULES[name]


def instances(name: str):
    from tilelang_core.check import check_source

    path = EXAMPLES / f"{name}.py"
    res = check_source(path.read_text(), str(path))
    assert not res.errors, [d.message for d in res.errors]
    assert res.kernels, f"no kernel instances found in {name}"
    return res.kernels


@pytest.mark.parametrize("name", NAMES)
def test_example_matches_reference_on_cpu(name):
    from tilelang_core.verify.child import verify_instance

    if not (EXAMPLES / f"{name}.py").exists():
        pytest.skip(f"examples/{name}.py not written yet")
    glb = module(name)
    if "ref_program" not in glb:
        pytest.skip(f"examples/{name}.py has no ref_program")
    for func in instances(name):
        rec = verify_instance(func, glb, glb["ref_program"], "cpu", bench=False)
        dtypes = {p.dtype for p in func.params if hasattr(p, "shape")}
        limit = 1e-2 if dtypes & {"float16", "bfloat16"} else 1e-5
        assert rec["passed"], rec["message"]
        assert rec["max_rel_err"] <= limit, (func.instance, rec)


def _check(kernel, ref, *inputs, tol):
    out = kernel(*inputs)
    expected = ref(*inputs)
    err = ((out.float() - expected.float()).abs().max() / expected.float().abs().max()).item()
    assert err <= tol, err


@pytest.mark.parametrize("M,N,K", [(100, 72, 40), (65, 33, 96), (1, 130, 17)])
def test_gemm_example_with_tails(M, N, K):
    glb = module("gemm")
    kernel = glb["matmul"](M, N, K, 32, 32, 16)
    a, b = torch.randn(M, K, dtype=torch.float16), torch.randn(K, N, dtype=torch.float16)
    _check(kernel, glb["ref_program"], a, b, tol=1e-2)


@pytest.mark.parametrize("M,N", [(100, 72), (7, 129)])
def test_elementwise_example_with_tails(M, N):
    glb = module("elementwise_add")
    kernel = glb["elementwise_add"](M, N, 32, 64)
    a, b = torch.randn(M, N), torch.randn(M, N)
    out = kernel(a, b)
    torch.testing.assert_close(out, glb["ref_program"](a, b), rtol=1e-5, atol=1e-5)
