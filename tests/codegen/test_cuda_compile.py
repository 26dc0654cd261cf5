"""Every example lowers to CUDA that nvcc 13 accepts for sm_80 and sm_90a (compiled in parallel)."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import pytest

from tilelang_core import check_source
from tests.conftest import EXAMPLES

ARCHS = ("sm_80", "sm_90a")
pytestmark = [pytest.mark.tvm, pytest.mark.nvcc]


def _instances():
    out = []
    for path in sorted(EXAMPLES.glob("*.py")):
        res = check_source(path.read_text(), str(path))
        out += [(path.name, k) for k in res.kernels]
    return out


@pytest.fixture(scope="module")
def compiled():
    """{(file, instance, arch): error text or None} for every example kernel and arch."""
    from tilelang_core.codegen.cuda import generate
    from tilelang_core.runtime.artifact import compile_cubin

    jobs = []
    for name, k in _instances():
        for arch in ARCHS:
            try:
                jobs.append((name, k.instance, arch, generate(k, arch).source))
            except Exception as exc:  # reported per kernel by the test
                jobs.append((name, k.instance, arch, exc))

    def build(job):
        name, inst, arch, src = job
        if isinstance(src, Exception):
            return (name, inst, arch), f"lowering failed: {src}"
        try:
            cubin = compile_cubin(src, arch)
            return (name, inst, arch), None if cubin[:4] == b"\x7fELF" else "not an ELF cubin"
        except Exception as exc:  # noqa: BLE001
            return (name, inst, arch), str(exc)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(build, jobs))


def test_every_example_has_kernels():
    assert len(_instances()) >= 8


def test_every_example_compiles_for_sm80_and_sm90a(compiled):
    failures = {k: v for k, v in compiled.items() if v}
    assert not failures, "\n".join(f"{k}: {v[:800]}" for k, v in failures.items())
    assert {arch for (_, _, arch) in compiled} == set(ARCHS)
