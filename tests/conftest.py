"""Shared test configuration: markers that skip when tvm, nvcc or a GPU is missing."""
from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def may_install_system_packages() -> bool:
    """Whether the tests may install a missing system program with apt-get: only where the run says so, in CI
    (`CI` set to 1/true, as CI services and .ci/run set it) or with TILELSP_APT=1; never with TILELSP_NO_APT=1."""
    import os

    if os.environ.get("TILELSP_NO_APT"):
        return False
    return os.environ.get("CI", "").lower() in ("1", "true", "yes") or os.environ.get("TILELSP_APT") == "1"


def system_tool(exe: str, package: str) -> str | None:
    """The path of a system program, installed with apt-get when missing, allowed (`may_install_system_packages`)
    and this is root on Debian; None when it cannot be had (the test then skips, saying how to get it)."""
    import os
    import subprocess

    found = shutil.which(exe)
    if found or not may_install_system_packages() or shutil.which("apt-get") is None or os.geteuid() != 0:
        return found
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    for step in (["apt-get", "install", "-y", "-qq", package], ["apt-get", "update", "-qq"],
                 ["apt-get", "install", "-y", "-qq", package]):
        subprocess.run(step, capture_output=True, timeout=900, env=env, stdin=subprocess.DEVNULL)
        if shutil.which(exe):
            break
    return shutil.which(exe)


def _has_gpu() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:
        return False


def pytest_collection_modifyitems(config, items):
    """Skip `tvm`/`nvcc`/`gpu` tests where the machine lacks what they need."""
    missing = {
        "tvm": importlib.util.find_spec("tvm") is None,
        "nvcc": shutil.which("nvcc") is None,
        "gpu": not _has_gpu(),
    }
    for item in items:
        for marker, absent in missing.items():
            if absent and marker in item.keywords:
                item.add_marker(pytest.mark.skip(reason=f"needs {marker}"))


@pytest.fixture(scope="module")
def tilelang_alias():
    """`import tilelang` is tilelang_core for the test module; the alias is removed after it unless `tilelang` was
    already imported."""
    import sys

    from tilelang_core.alias import install_alias, uninstall_alias

    had = "tilelang" in sys.modules
    install_alias(force=True)
    yield
    if not had:
        uninstall_alias()


@pytest.fixture(scope="module")
def run_aliased(tmp_path_factory, tilelang_alias):
    """A loader `(name, source) -> globals` that runs TileLang source as a module under the `tilelang` alias."""
    import runpy
    import textwrap

    def load(name: str, source: str) -> dict:
        path = tmp_path_factory.mktemp(name) / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        return runpy.run_path(str(path), run_name=name)

    return load
