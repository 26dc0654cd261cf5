"""End-to-end: `tilelsp/layout` through the real server and its worker (no tvm needed: the layouts come from the
codegen's plan), for the wgmma and the mma.sync accumulator and a swizzled shared tile of examples/gemm.py."""
from __future__ import annotations

import pytest
from conftest import ROOT, diagnostics, open_doc

GEMM = ROOT / "examples/gemm.py"


@pytest.mark.asyncio
async def test_layout_request_serves_svg_text_and_the_webview_page(client):
    uri = GEMM.as_uri()
    open_doc(client, uri, GEMM.read_text())
    await diagnostics(client, uri)
    send = client.protocol.send_request_async
    hopper = await send("tilelsp/layout", {"textDocument": {"uri": uri}, "kernel": "gemm"})
    assert [b.name for b in hopper.buffers] == ["A_shared", "B_shared", "C_local"] and hopper.target == "sm_90a"
    c = hopper.buffers[2]
    assert c.scope == "local.fragment" and c.description.startswith("wgmma accumulator")
    assert c.svg.startswith("<svg") and "legend-cell" in c.svg and "warp holding each element" in c.text
    assert hopper.html.count("<svg") == 3
    ampere = await send("tilelsp/layout", {"uri": uri, "kernel": "gemm", "buffer": "B_shared", "target": "sm_80"})
    b, = ampere.buffers
    assert "chunk ^= row & 7" in b.description and "ldmatrix B" in b.text and "conflict-free" in b.text
    with pytest.raises(Exception, match="no fragment or shared buffer named 'X'"):
        await send("tilelsp/layout", {"uri": uri, "kernel": "gemm", "buffer": "X"})
