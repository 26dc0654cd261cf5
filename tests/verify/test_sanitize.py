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
    from tilelsp.cli.verify import run_verify

    path = ROOT / "examples/errors/uninitialized_accumulator.py"
    rc = run_verify(_args(path))
    (rec,) = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert rc == 1 and rec["passed"] is False
    gemm_line = next(k for k, ln in enumerate(path.read_text().splitlines(), 1) if "T.gemm(" in ln)
    assert [(f["code"], f["line"]) for f in rec["sanitizer"]] == [("sanitize-uninitialized-read", gemm_line)]
    assert "T.gemm here reads C_local[0, 0] (a fragment)" in rec["sanitizer"][0]["message"]


@pytest.mark.tvm
def test_sanitize_of_a_correct_example_prints_pass(capsys):
    from tilelsp.cli.verify import run_verify

    rc = run_verify(_args(ROOT / "examples/gemm_splitk.py", json=False))
    out = capsys.readouterr().out
    assert rc == 0 and out.startswith("PASS") and "sanitize-" not in out, out


def test_without_sanitize_the_dataflow_error_stops_the_file(capsys):
    from tilelsp.cli.verify import run_verify

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
    from tilelang_core.lowering import tolerating
    from tilelang_core.runtime.cache import ArtifactCache

    store = ArtifactCache(tmp_path)
    with tolerating(("dataflow",)):
        store.put("ab" * 32, {"arch": "cpu"}, "src", b"bin")  # built past the checks: a later hit would skip them
    assert store.get("ab" * 32) is None and not any(tmp_path.rglob("*.json"))
    store.put("ab" * 32, {"arch": "cpu", "content_hash": ""}, "src", b"bin")
    assert any(tmp_path.rglob("*.json"))


def _example_findings(name: str, replace: tuple = ()):
    """The sanitizer's findings on examples/errors/NAME.py's instance (text replacements applied), and the text."""
    from tilelang_core.check import check_source
    from tilelang_core.ir import nodes as N
    from tilelang_core.ir.arith import as_int
    from tilelang_core.verify.sanitize import poison, sanitize_run

    text = (ROOT / "examples/errors" / f"{name}.py").read_text()
    for old, new in replace:
        text = text.replace(old, new)
    (func,) = check_source(text, f"{name}.py").kernels
    out_idx = tuple(k % len(func.params) for k in func.out_idx or ())
    args = []
    for k, p in enumerate(func.params):
        t = torch.randn(*[as_int(d) for d in p.shape]).to(getattr(torch, p.dtype))
        if k in out_idx:
            poison(t)
        args.append(t)
    assert all(isinstance(p, N.Buffer) for p in func.params)
    return sanitize_run(func, out_idx, args), text


def _marked(text: str, code: str) -> list[int]:
    return [k for k, ln in enumerate(text.splitlines(), 1) if f"[{code}]" in ln]


@pytest.mark.tvm
def test_the_newcomers_k_loop_example_is_caught_and_its_fix_is_clean():
    found, text = _example_findings("reduction_axis_step")
    assert [(d.code, d.span.line) for d in found] == [("sanitize-reduction-step", ln)
                                                       for ln in _marked(text, "reduction-axis-step")]
    assert "A[:, 32:64] is never read" in found[0].message
    fixed, _ = _example_findings("reduction_axis_step", (("T.ceildiv(K, 64)", "T.ceildiv(K, block_K)"),
                                                         ("k * 64", "k * block_K")))
    assert fixed == []


@pytest.mark.tvm
def test_the_in_place_matmul_example_is_caught_at_its_read_and_its_write():
    found, text = _example_findings("inplace_hazard")
    read = next(k for k, ln in enumerate(text.splitlines(), 1) if "T.copy(X[" in ln)
    assert [(d.code, d.span.line) for d in found] == [("sanitize-inplace-hazard", read)] + [
        ("sanitize-inplace-hazard", ln) for ln in _marked(text, "inplace-hazard")]
    assert "block (bx=1, by=0) reads X[0, 0], which block (bx=0, by=0)" in found[0].message
