"""Diagnostic case files: every `# error: [code]` / `# warning: [code]` comment must be matched by exactly one
diagnostic starting on that line, and no other error or warning may appear (false positives fail too).

Runs over tests/diagnostics/cases/*.py and examples/errors/*.py; examples/*.py must have no errors at all.
A case file may name its targets in a comment `# tilelsp-test: targets=sm_90a,sm_86`.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from tilelang_core import check_source
from tilelang_core.diagnostics import Severity

ROOT = Path(__file__).resolve().parents[2]
CASES = sorted((Path(__file__).parent / "cases").glob("*.py"))
ERRORS = sorted((ROOT / "examples" / "errors").glob("*.py"))
EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
EXPECT = re.compile(r"#\s*(error|warning):\s*\[([a-z0-9-]+)\]")
TARGETS = re.compile(r"#\s*tilelsp-test:\s*targets=([\w,]+)")


def expected(text: str) -> set[tuple[int, str, str]]:
    """(line, severity, code) for every expectation comment."""
    out = set()
    for n, line in enumerate(text.splitlines(), 1):
        for sev, code in EXPECT.findall(line):
            out.add((n, sev, code))
    return out


def actual(text: str, path: str, need_kernels: bool = True) -> set[tuple[int, str, str]]:
    """(line, severity, code) for every error/warning check_source reports."""
    m = TARGETS.search(text)
    targets = tuple(m.group(1).split(",")) if m else ("sm_90a",)
    result = check_source(text, path, targets=targets)
    if need_kernels:
        assert result.kernels, f"{path}: no kernel instance was found"
    return {(d.span.line, d.severity.value, d.code) for d in result.diagnostics
            if d.severity in (Severity.ERROR, Severity.WARNING)}


def _case_id(p: Path) -> str:
    return p.name


@pytest.mark.parametrize("path", CASES, ids=_case_id)
def test_case_file(path: Path):
    text = path.read_text()
    assert actual(text, str(path)) == expected(text)


@pytest.mark.parametrize("path", ERRORS, ids=_case_id)
def test_error_example(path: Path):
    text = path.read_text()
    assert actual(text, str(path), need_kernels=False) == expected(text)


@pytest.mark.parametrize("path", EXAMPLES, ids=_case_id)
def test_example_has_no_errors(path: Path):
    text = path.read_text()
    result = check_source(text, str(path))
    assert [(d.span.line, d.code, d.message) for d in result.diagnostics if d.is_error] == []
    assert result.kernels, f"{path.name}: no kernel found"
