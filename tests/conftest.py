"""Shared test configuration: markers that skip when tvm, nvcc or a GPU is missing."""
from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


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
def run_aliased(tmp_path_factory):
    """A loader `(name, source) -> globals` that runs TileLang source as a module under the `tilelang` alias; the
    alias is removed after the test module unless `tilelang` was already imported."""
    import runpy
    import sys
    import textwrap

    from tilelang_core.alias import install_alias, uninstall_alias

    had = "tilelang" in sys.modules

    def load(name: str, source: str) -> dict:
        path = tmp_path_factory.mktemp(name) / f"{name}.py"
        path.write_text(textwrap.dedent(source))
        install_alias(force=True)
        return runpy.run_path(str(path), run_name=name)

    yield load
    if not had:
        uninstall_alias()
