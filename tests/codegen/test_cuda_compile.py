"""Every example lowers to CUDA that nvcc 13 accepts for sm_80 and sm_90a (compiled in parallel), without a warning."""
from __future__ import annotations

import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

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


def _nvcc(source: str, arch: str) -> tuple[bytes, list[str]]:
    """The cubin and nvcc's warning lines: the artifact's flags (runtime.artifact.compile_cubin) without -w."""
    from tilelang_core.runtime.artifact import arch_flags

    with tempfile.TemporaryDirectory(prefix="tilelsp-nvcc-") as tmp:
        cu, out = Path(tmp) / "kernel.cu", Path(tmp) / "kernel.cubin"
        cu.write_text(source)
        p = subprocess.run(["nvcc", "-cubin", "-O3", "-std=c++17", *arch_flags(arch), "-o", str(out), str(cu)],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError(p.stderr[-4000:])
        return out.read_bytes(), [ln for ln in p.stderr.splitlines() if "warning" in ln]


WARNINGS: dict = {}


@pytest.fixture(scope="module")
def compiled():
    """{(file, instance, arch): error text or None} for every example kernel and arch (warnings in WARNINGS)."""
    from tilelang_core.codegen.cuda import generate

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
            cubin, WARNINGS[name, inst, arch] = _nvcc(src, arch)
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


def test_every_example_compiles_without_nvcc_warnings(compiled):
    """No unused cse_v* variables, unused half helpers or inexact float literals (tvm_source.quiet_source)."""
    noisy = {k: v for k, v in WARNINGS.items() if v}
    assert len(WARNINGS) == len(compiled) - sum(bool(v) for v in compiled.values())
    assert not noisy, "\n".join(f"{k}: {len(v)} warnings, first: {v[0]}" for k, v in noisy.items())
