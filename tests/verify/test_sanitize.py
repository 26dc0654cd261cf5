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


@pytest.mark.parametrize("shape", [(3,), (100, 64), (128, 128), (7, 5, 3)])
def test_writer_shadows_are_64_byte_aligned(shape):
    from tilelang_core.codegen.cpu.shadow import zeros_aligned

    t = zeros_aligned(shape)  # the LLVM code's vector loads fault on less (a 128x128 output crashed)
    assert t.data_ptr() % 64 == 0 and tuple(t.shape) == shape and not t.any()


def test_nothing_is_cached_while_checks_are_tolerated(tmp_path):
    from tilelang_core.passes.pipeline import tolerating
    from tilelang_core.runtime.cache import ArtifactCache

    store = ArtifactCache(tmp_path)
    with tolerating(("dataflow",)):
        store.put("ab" * 32, {"arch": "cpu"}, "src", b"bin")  # built past the checks: a later hit would skip them
    assert store.get("ab" * 32) is None and not any(tmp_path.rglob("*.json"))
    store.put("ab" * 32, {"arch": "cpu", "content_hash": ""}, "src", b"bin")
    assert any(tmp_path.rglob("*.json"))
