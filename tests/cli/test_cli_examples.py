"""`tilelsp check examples/` as the README runs it: the kernels are clean; examples/errors/ (excluded from the
folder walk by the repository's [tool.tilelsp]) is still checked when named, and reports errors.

Which code each error example must report is tested precisely in tests/diagnostics/test_cases.py.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from tilelsp import cli

ROOT = Path(__file__).resolve().parents[2]


def check(capsys, *argv) -> tuple[int, str]:
    code = cli.main(["check", *argv])
    out = capsys.readouterr().out
    return code, out


@pytest.fixture(autouse=True)
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def test_check_examples_is_clean(capsys):
    kernels = [p for p in (ROOT / "examples").rglob("*.py") if "errors" not in p.parts]
    code, out = check(capsys, "examples")
    assert code == 0, out
    assert out.splitlines()[-1] == f"0 errors, 0 warnings in {len(kernels)} files"


def test_check_examples_errors_reports_errors_in_every_file(capsys):
    files = sorted(p.name for p in (ROOT / "examples" / "errors").glob("*.py"))
    code, out = check(capsys, "examples/errors", "--format", "json")
    reported = {Path(d["path"]).name for d in json.loads(out)}
    assert code == 1
    assert sorted(set(files) - reported) == []
