"""The VS Code extension: npm ci, unit tests, packaging and the .vsix check, plus its agreement with the server."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXT = ROOT / "vscode-extension"
MANIFEST = json.loads((EXT / "package.json").read_text())
SKIP_COPY = shutil.ignore_patterns("node_modules", "dist", "out", "*.vsix")


def _npm(args: list[str], cwd: Path, timeout: int) -> subprocess.CompletedProcess:
    # The unit tests include a short session with the real server (test/server.e2e.test.ts).
    env = {**os.environ, "TILELSP_ROOT": str(ROOT), "TILELSP_PYTHON": sys.executable}
    proc = subprocess.run(["npm", *args], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)
    assert proc.returncode == 0, f"npm {' '.join(args)} failed:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return proc


def _node_ok() -> bool:
    """npm is on PATH and node is 20.19 or later (vite 7, which vitest 3 uses, needs it)."""
    if shutil.which("npm") is None or shutil.which("node") is None:
        return False
    out = subprocess.run(["node", "--version"], capture_output=True, text=True).stdout.strip().lstrip("v")
    major, minor = (int(x) for x in out.split(".")[:2])
    return (major, minor) >= (20, 19)


@pytest.mark.slow
@pytest.mark.skipif(not _node_ok(), reason="needs npm and node >= 20.19")
def test_install_test_package_and_check_vsix(tmp_path):
    """`npm ci && npm test && npm run package` on a clean copy, then scripts/check-vsix.mjs on the result."""
    work = tmp_path / "vscode-extension"
    shutil.copytree(EXT, work, ignore=SKIP_COPY)
    _npm(["ci", "--prefer-offline", "--ignore-scripts", "--no-audit", "--no-fund"], work, 240)
    _npm(["test", "--", "--reporter=dot", "--reporter=json", "--outputFile=vitest.json"], work, 240)
    report = json.loads((work / "vitest.json").read_text())
    failed = [f"{t['fullName']}: {' '.join(t['failureMessages'])[:300]}"
              for f in report["testResults"] for t in f["assertionResults"] if t["status"] == "failed"]
    assert not failed, "\n".join(failed)
    assert report["numPassedTests"] >= 60
    passed = {Path(f["name"]).name: sum(t["status"] == "passed" for t in f["assertionResults"])
              for f in report["testResults"]}
    # The sessions with the real server ran (only their slow lowering cases are skipped by default).
    assert passed["server.e2e.test.ts"] >= 4 and passed["activation.e2e.test.ts"] >= 4, passed
    _npm(["run", "package"], work, 180)
    vsix = work / "tilelsp.vsix"
    assert vsix.is_file() and vsix.stat().st_size > 10_000
    check = subprocess.run(["node", "scripts/check-vsix.mjs", str(vsix)], cwd=work, capture_output=True, text=True,
                           timeout=60)
    assert check.returncode == 0, check.stderr
    assert "ok" in check.stdout


def test_version_matches_python_distribution():
    """The extension and the tilelsp distribution are released together."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert MANIFEST["version"] == project["version"]


def test_settings_defaults_match_server():
    """Every server setting is contributed with the server's default (tilelsp/server/settings.py)."""
    settings = pytest.importorskip("tilelsp.server.settings")
    props = MANIFEST["contributes"]["configuration"]["properties"]
    defaults = settings.Settings()
    for field in ("targets", "checkOnChange", "debounceMs", "lowerOnSave", "verifyDevice", "trustWorkspace",
                  "workerTimeoutSec"):
        value = getattr(defaults, field)
        assert props[f"tilelsp.{field}"]["default"] == (list(value) if isinstance(value, tuple) else value), field
    assert props["tilelsp.verifyDevice"]["enum"] == list(settings._DEVICES)


def test_code_lens_commands_are_contributed():
    """The client command ids the server puts on code lenses exist in the extension."""
    codelens = pytest.importorskip("tilelsp.features.codelens")
    contributed = {c["command"] for c in MANIFEST["contributes"]["commands"]}
    assert {command for _title, command in codelens.LENSES} <= contributed


def test_activation_and_selector():
    """Activates for Python files and never hard-depends on the Python extension."""
    assert "onLanguage:python" in MANIFEST["activationEvents"]
    assert "ms-python.python" not in MANIFEST.get("extensionDependencies", [])
    assert MANIFEST["main"] == "./dist/extension.js"
    lock = json.loads((EXT / "package-lock.json").read_text())
    assert lock["packages"][""]["dependencies"] == MANIFEST["dependencies"]
