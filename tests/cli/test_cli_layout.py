"""`tilelsp layout`: the thread/bank views of examples/gemm.py's buffers as text, SVG, PNG and HTML."""
from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tilelsp import cli

from tests.conftest import EXAMPLES

GEMM = str(EXAMPLES / "gemm.py")


def _run(capsysbinary, *args) -> tuple[int, bytes, str]:
    code = cli.main(["layout", GEMM, *args])
    out = capsysbinary.readouterr()
    return code, out.out, out.err.decode()


def test_text_of_every_buffer(capsysbinary):
    code, out, err = _run(capsysbinary, "--target", "sm_80")
    text = out.decode()
    assert code == 0, err
    assert "C_local: local.fragment 128x128 float32 — mma.sync accumulator" in text
    assert "A_shared: shared 128x32 float16" in text and "ldmatrix A of T.gemm line 27" in text
    assert "conflict-free" in text and "conflicts," not in text


def test_svg_of_the_wgmma_accumulator_and_of_a_swizzled_tile(capsysbinary, tmp_path):
    code, out, _ = _run(capsysbinary, "--buffer", "C_local")
    assert code == 0
    root = ET.fromstring(out)
    assert "wgmma accumulator" in "".join(root.itertext())
    target = tmp_path / "b.svg"
    code, out, _ = _run(capsysbinary, "--buffer", "B_shared", "-o", str(target))
    assert code == 0 and out == b"" and "wgmma 128-byte swizzle" in target.read_text()


def test_png_and_html(capsysbinary, tmp_path):
    code, out, _ = _run(capsysbinary, "--format", "html")
    assert code == 0 and out.startswith(b"<!DOCTYPE html>") and out.count(b"<svg") == 3
    pytest.importorskip("matplotlib")
    png = tmp_path / "c.png"
    code, _, err = _run(capsysbinary, "--buffer", "C_local", "--format", "png", "-o", str(png))
    assert code == 0, err
    assert png.read_bytes()[:4] == b"\x89PNG"


def test_usage_errors(capsysbinary):
    code, _, err = _run(capsysbinary, "--buffer", "nope")
    assert code == 2 and "(it has: A_shared, B_shared, C_local)" in err
    code, _, err = _run(capsysbinary, "--format", "svg")
    assert code == 2 and "name it with --buffer" in err
    code, _, err = _run(capsysbinary, "--kernel", "other")
    assert code == 2 and "no kernel named 'other'" in err
