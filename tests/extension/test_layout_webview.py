"""The Show Layout webview's HTML (the server's `tilelsp/layout` page) rendered by a real browser, headless
Chromium, to a screenshot whose pixels are checked: the legend swatches and the warp pattern of the wgmma and
the mma.sync accumulators of examples/gemm.py. Installs Debian's `chromium` when missing and allowed (CI=1 or
TILELSP_APT=1, as root with apt-get, as .ci/run runs), else skips."""
from __future__ import annotations

import subprocess

import pytest

from tilelang_core.check import check_source
from tilelsp.features.layout_svg import PALETTE
from tilelsp.features.layout_view import layout_request

from tests.conftest import EXAMPLES, system_tool

WIDTH, HEIGHT = 900, 3800


@pytest.fixture(scope="module")
def chromium():
    exe = system_tool("chromium", "chromium")
    if exe is None:
        pytest.skip("needs Debian's chromium: sudo apt-get install -y chromium (or run with CI=1 or TILELSP_APT=1 as "
                    "root to let the tests install it)")
    return exe


def _screenshot(chromium: str, html: str, tmp_path) -> "object":
    image = pytest.importorskip("PIL.Image")
    import numpy as np

    page, shot = tmp_path / "layout.html", tmp_path / "layout.png"
    page.write_text(html)
    subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                    "--force-device-scale-factor=1", f"--window-size={WIDTH},{HEIGHT}", f"--screenshot={shot}",
                    page.as_uri()], capture_output=True, timeout=120, check=True)
    return np.asarray(image.open(shot).convert("RGB")).astype(int)


def _rgb(hex_colour: str):
    return tuple(int(hex_colour[k:k + 2], 16) for k in (1, 3, 5))


def _mask(pixels, hex_colour: str):
    return (pixels == _rgb(hex_colour)).all(axis=2)


def _has_swatch(mask, size: int = 14) -> bool:
    """A size x size block of exactly one colour (a legend cell is 18 x 18 with a thin border)."""
    import numpy as np

    s = np.pad(mask.astype(int).cumsum(0).cumsum(1), ((1, 0), (1, 0)))
    block = s[size:, size:] - s[:-size, size:] - s[size:, :-size] + s[:-size, :-size]
    return bool((block == size * size).any())


def _page(arch: str) -> str:
    path = EXAMPLES / "gemm.py"
    func = check_source(path.read_text(), str(path), (arch,)).kernels[0]
    return layout_request({"target": arch}, [func])["html"]


def test_webview_page_renders_legends_and_the_mma_sync_warp_split(chromium, tmp_path):
    px = _screenshot(chromium, _page("sm_80"), tmp_path)
    for k in range(8):  # warps 0-3 of C_local, slots 0-7 of the shared tiles: every legend cell is drawn
        assert _has_swatch(_mask(px, PALETTE[k])), f"no legend cell of colour {PALETTE[k]}"
    blue, orange = _mask(px, PALETTE[0]), _mask(px, PALETTE[1])
    # mma.sync, warps 2x2: a row of the accumulator is half warp 0 (left), half warp 1 (right), 64 columns each
    rows = [y for y in range(px.shape[0]) if blue[y].sum() >= 280 and orange[y].sum() >= 280]
    assert rows, "no row of the accumulator split between warps 0 and 1"
    y = rows[0]
    assert blue[y].nonzero()[0].mean() < orange[y].nonzero()[0].mean()


def test_webview_page_renders_the_wgmma_rows_of_each_warp(chromium, tmp_path):
    px = _screenshot(chromium, _page("sm_90a"), tmp_path)
    full = {k: [y for y in range(px.shape[0]) if _mask(px[y:y + 1], PALETTE[k]).sum() >= 600] for k in range(4)}
    # wgmma: warp w holds whole rows 16w..16w+15 of each 64-row band, so each warp colour fills whole rows, in order
    assert all(full[k] for k in range(4)), {k: len(v) for k, v in full.items()}
    assert full[0][0] < full[1][0] < full[2][0] < full[3][0]
