"""`tilelsp verify --sanitize`: the silent-bug examples the dataflow checks reject still run, sanitized, and each
finding comes back at its line (JSON and text); a correct example gets none; without --sanitize the check stops
the file as before. Plus the coverage wording of the unwritten regions."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

torch = pytest.importorskip("torch")
ROOT = Path(__file__).resolve().parents[2]


def _args(path, **kw):
    base = dict(file=str(path), kernel=None, device="cpu", json=True, timeout=240.0, bench=False, sanitize=True)
    base.update(kw)
    return SimpleNamespace(**base)


@pytest.mark.tvm
def test_sanitize_finds_the_uninitialised_accumulator_at_its_line(capsys):
    from tilelsp.verify_command import run_verify

    path = ROOT / "examples/errors/uninitialized_accumulator.py"
    rc = run_verify(_args(path))
    (rec,) = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert rc == 1 and rec["passed"] is False
    gemm_line = next(k for k, ln in enumerate(path.read_text().splitlines(), 1) if "T.gemm(" in ln)
    assert [(f["code"], f["line"]) for f in rec["sanitizer"]] == [("sanitize-uninitialized-read", gemm_line)]
    assert "T.gemm here reads C_local[0, 0] (a fragment)" in rec["sanitizer"][0]["message"]


@pytest.mark.tvm
def test_sanitize_of_a_correct_example_prints_pass(capsys):
    from tilelsp.verify_command import run_verify

    rc = run_verify(_args(ROOT / "examples/gemm_splitk.py", json=False))
    out = capsys.readouterr().out
    assert rc == 0 and out.startswith("PASS") and "sanitize-" not in out, out


def test_without_sanitize_the_dataflow_error_stops_the_file(capsys):
    from tilelsp.verify_command import run_verify

    rc = run_verify(_args(ROOT / "examples/errors/uninitialized_accumulator.py", sanitize=False))
    captured = capsys.readouterr()
    assert rc == 1 and captured.out == "" and "uninitialized-read" in captured.err


@pytest.mark.parametrize("rows,cols,words", [
    ([96, 97, 98, 99], [], "rows 96..99 of 100"),
    ([], [0, 5, 6], "columns 0, 5..6 of 8"),
    ([1], [7], "rows 1 of 100 and columns 7 of 8"),
])
def test_coverage_regions_in_words(rows, cols, words):
    from tilelang_core.verify.sanitize import describe_region

    mask = torch.zeros(100, 8, dtype=torch.bool)
    mask[rows, :] = True
    mask[:, cols] = True
    assert describe_region(mask, "C") == words


def test_scattered_holes_are_a_bounding_box():
    from tilelang_core.verify.sanitize import describe_region

    mask = torch.zeros(100, 8, dtype=torch.bool)
    mask[10, 2] = mask[20, 3] = True
    assert describe_region(mask, "C") == "first C[10, 2], within C[10..20, 2..3]"
