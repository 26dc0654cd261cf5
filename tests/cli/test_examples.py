"""`tilelsp check` over examples/: the kernels are clean, and each file of examples/errors reports its marked code."""
from __future__ import annotations

import json
import re
from pathlib import Path

from tilelsp import cli

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
MARK = re.compile(r"#\s*(error|warning):\s*\[([a-z0-9-]+)\]")


def reported(capsys, *paths) -> tuple[int, list[dict]]:
    code = cli.main(["check", *map(str, paths), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_examples_outside_errors_have_no_errors(capsys):
    files = sorted(p for p in EXAMPLES.rglob("*.py") if "errors" not in p.relative_to(EXAMPLES).parts)
    assert files
    code, diags = reported(capsys, *files)
    assert [d for d in diags if d["severity"] == "error"] == [] and code == 0


def test_every_error_example_reports_its_marked_code(capsys):
    files = sorted((EXAMPLES / "errors").glob("*.py"))
    expected = set()
    for path in files:
        for n, line in enumerate(path.read_text().splitlines(), start=1):
            for m in MARK.finditer(line):
                expected.add((path.name, n, m.group(2)))
    code, diags = reported(capsys, *files)
    found = {(d["path"].rsplit("/", 1)[-1], d["line"], d["code"]) for d in diags}
    assert code == 1
    assert sorted(expected - found) == []
