"""The README's set-up does what it says: the CPU build of torch explicitly, the CI script runs the README's own
commands, and the tests install system packages only where the run allows it (CI=1 or TILELSP_APT=1)."""
from __future__ import annotations

import re

import pytest

from tests.conftest import ROOT, may_install_system_packages

README = (ROOT / "README.md").read_text(encoding="utf-8")
CI_RUN = (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def _sh_blocks(section: str) -> list[str]:
    body = README.split(f"## {section}", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)```", body, re.S)


def test_the_install_line_picks_the_cpu_build_and_says_how_to_get_the_cuda_one():
    install, test = (block.strip() for block in _sh_blocks("Set-up (two commands)")[:2])
    assert "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in install
    assert "CUDA build" in README.split("## Set-up", 1)[1].split("## ", 1)[0]
    assert test == "python -m pytest -n 2 -q"


def test_ci_runs_the_readme_install_and_ends_with_its_test_command():
    install, test = (block.strip() for block in _sh_blocks("Set-up (two commands)")[:2])
    assert CI_RUN.rstrip("\n").splitlines()[-1] == test
    for step in install.split(" && ")[2:-1]:  # the pip steps (the venv and the check are the script's own)
        assert step.replace("pip install", "python -m pip install -q") in CI_RUN, step
    assert re.search(r"^export CI=1\b", CI_RUN, re.M)


@pytest.mark.parametrize("env, allowed", [({}, False), ({"CI": "1"}, True), ({"CI": "true"}, True),
                                          ({"TILELSP_APT": "1"}, True), ({"CI": "1", "TILELSP_NO_APT": "1"}, False),
                                          ({"CI": "0"}, False)])
def test_system_packages_are_installed_only_when_the_run_allows_it(monkeypatch, env, allowed):
    for name in ("CI", "TILELSP_APT", "TILELSP_NO_APT"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert may_install_system_packages() is allowed
