"""The README's "Using it" commands run as written (from a folder holding the repository's examples)."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys

import pytest

from tests.conftest import ROOT

# commands that cannot run as written in a test, and why (each is tested elsewhere)
NOT_HERE = {
    "--ray": "needs a Ray cluster at the README's placeholder address (tests/runtime/test_ray_autotune.py)",
    "serve": "serves until its client exits (tests/lsp)",
    "autotune": "a full search takes minutes on a loaded 2-core machine (tests/runtime/test_autotune_search.py)",
}
EXIT = {"tilelsp check examples/errors/": 1}  # one deliberate mistake per file: exit 1; every other command 0


def readme_commands() -> list[str]:
    """The commands of the README's "Using it" block, without their comments."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"## Using it\n+```sh\n(.*?)```", text, re.S).group(1)
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_the_readme_block_is_found_and_names_every_command():
    words = {shlex.split(c)[1] if c.startswith("tilelsp") else "run" for c in readme_commands()}
    assert {"check", "ir", "layout", "verify", "autotune", "serve", "run"} <= words


@pytest.mark.tvm
@pytest.mark.slow
@pytest.mark.parametrize("command", [c for c in readme_commands() if not any(k in shlex.split(c) for k in NOT_HERE)])
def test_readme_command_runs_as_written(command, tmp_path):
    (tmp_path / "examples").symlink_to(ROOT / "examples")
    argv = shlex.split(command)
    argv = [sys.executable, "-m", "tilelsp", *argv[1:]] if argv[0] == "tilelsp" else [sys.executable, *argv[1:]]
    env = dict(os.environ, PYTHONPATH=str(ROOT), CUDA_VISIBLE_DEVICES="")
    out = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    assert out.returncode == EXIT.get(command, 0), f"{command}: exit {out.returncode}\n{out.stdout[-1500:]}\n{out.stderr[-1500:]}"
    assert "Traceback" not in out.stderr
