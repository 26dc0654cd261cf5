"""Every example runs end to end on tilelang_core (CPU backend when there is no GPU) and matches its torch reference."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# One interpreter for all examples: tvm and torch are imported once.
_RUNNER = """
import runpy, sys, traceback
import tilelang_core
tilelang_core.install_alias(force=True)
failed = []
for path in sys.argv[1:]:
    try:
        runpy.run_path(path, run_name="__main__")
    except BaseException:
        traceback.print_exc()
        failed.append(path)
print("FAILED:", failed)
sys.exit(1 if failed else 0)
"""


@pytest.mark.tvm
@pytest.mark.slow
def test_examples_run_and_match_their_references():
    paths = sorted(str(p) for p in EXAMPLES.glob("*.py"))
    out = subprocess.run([sys.executable, "-c", _RUNNER, *paths], capture_output=True, text=True, timeout=900, check=False)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    for p in paths:
        assert f"{Path(p).stem}: all checks pass" in out.stdout
