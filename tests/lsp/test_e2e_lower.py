"""End-to-end with the worker: lowering on save publishes "tilelsp-lower" diagnostics next to the fast
ones, showIR returns CUDA text and a line map, and the kernel hover then shows the lowered code."""
from __future__ import annotations

import pytest
from conftest import ROOT, change_doc, diagnostics, open_doc
from lsprotocol import types

GEMM = ROOT / "examples/gemm.py"


@pytest.mark.tvm
@pytest.mark.slow
@pytest.mark.asyncio
async def test_save_lowers_and_show_ir(client):
    client.set_configuration({"tilelsp": {"debounceMs": 0, "lowerOnSave": True, "workerTimeoutSec": 240}})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    uri, text = GEMM.as_uri(), GEMM.read_text()
    broken = text.replace("threads=128", "threads=2048")
    open_doc(client, uri, broken)
    await diagnostics(client, uri)
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    got = await diagnostics(client, uri, 1, lambda ds: any(d.source == "tilelsp-lower" for d in ds), timeout=240)
    sources = {(d.source, d.code) for d in got.diagnostics}
    assert ("tilelsp", "threads-exceeded") in sources  # the fast one is still there
    assert ("tilelsp-lower", "threads-exceeded") in sources  # lowering refuses what the checks reject
    with pytest.raises(Exception, match="threads-exceeded"):  # no code for a kernel the checks reject
        await client.protocol.send_request_async("tilelsp/showIR", {"uri": uri, "kernel": "gemm", "stage": "cuda"})
    broken = broken.replace("threads=2048", "threads=128")
    change_doc(client, uri, broken, 2)
    await diagnostics(client, uri, 2)
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    await diagnostics(client, uri, 2, lambda ds: any(d.source == "tilelsp-lower" for d in ds), timeout=240)
    res = await client.protocol.send_request_async(
        "tilelsp/showIR", {"uri": uri, "kernel": "gemm", "stage": "cuda"})
    assert res.languageId == "cuda" and "__global__" in res.text and res.lineMap
    gemm_line = next(i for i, l in enumerate(broken.splitlines()) if "T.gemm(" in l)
    assert gemm_line in {m.source for m in res.lineMap}
    parsed = await client.workspace_execute_command_async(types.ExecuteCommandParams(
        "tilelsp.server.showIR", [uri, "gemm", "parsed"]))
    assert parsed["languageId"] == "python" and "T.alloc_shared" in parsed["text"]
    def_line = next(i for i, l in enumerate(broken.splitlines()) if "def gemm(" in l)
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(def_line, broken.splitlines()[def_line].index("gemm") + 1)))
    assert "<summary>CUDA</summary>" in hover.contents.value
    assert '__global__' in hover.contents.value.split("<summary>CUDA</summary>")[1]  # the kernel, not the header
    # T.gemm after the save: this call's M/N/K, the instruction, warps and swizzles, and its CUDA lines
    on_gemm = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(gemm_line, broken.splitlines()[gemm_line].index("gemm") + 1)))
    text = on_gemm.contents.value
    assert "M=128 N=128 K=32" in text and "wgmma.mma_async m64n128k16" in text and "128-byte swizzle" in text
    assert f"CUDA for line {gemm_line + 1}" in text and "```cuda" in text
    # the lines that implement the call (the mainloop's wgmma, waits and barriers), not the tile scheduler's index
    # arithmetic; the stream-K remainder's copy is counted, behind Show CUDA
    excerpt = text.split("```cuda")[1].split("```")[0]
    assert "tl_gemm_wgmma" in excerpt and "wgmma_wait" in excerpt and "[…]" in excerpt, excerpt
    assert "sk_ptr" not in excerpt and "blockIdx" not in excerpt and max(map(len, excerpt.splitlines())) < 120, excerpt
    assert "other place" in text and "command:tilelsp.showCuda" in text
    a_line = next(i for i, l in enumerate(broken.splitlines()) if "A_shared = T.alloc_shared" in l)
    on_a = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(a_line, broken.splitlines()[a_line].index("A_shared") + 1)))
    assert "swizzle: 16-byte chunks XOR-swizzled within each row" in on_a.contents.value


@pytest.mark.tvm
@pytest.mark.slow
@pytest.mark.asyncio
async def test_an_edit_is_lowered_in_the_background_and_the_hover_shows_its_cuda_without_a_save(client):
    import asyncio
    import time

    client.set_configuration({"tilelsp": {"debounceMs": 0, "lowerOnSave": True, "workerTimeoutSec": 240}})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    uri, text = GEMM.as_uri(), GEMM.read_text()
    open_doc(client, uri, text)
    await diagnostics(client, uri)
    edited = text.replace("block_K=32", "block_K=64") if "block_K=32" in text else text + "\n# edited\n"
    change_doc(client, uri, edited, 2)  # no save
    lines = edited.splitlines()
    gemm_line = next(i for i, l in enumerate(lines) if "T.gemm(" in l)
    where = types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(gemm_line, lines[gemm_line].index("gemm") + 1))
    start, seen_progress = time.monotonic(), False
    while time.monotonic() - start < 240:
        hover = await client.text_document_hover_async(where)
        value = hover.contents.value if hover else ""
        seen_progress |= "lowering this version" in value
        if f"CUDA for line {gemm_line + 1}" in value and "```cuda" in value:
            break
        await asyncio.sleep(0.2)
    else:
        pytest.fail("the edited text was not lowered in the background")
    assert "lowering this version" not in value
    lowered_s, asked = time.monotonic() - start, time.perf_counter()
    await client.text_document_hover_async(where)  # answered from the stored lowering: no work in the hover
    print(f"background lowering {lowered_s:.1f} s, then a hover in {(time.perf_counter() - asked) * 1e3:.0f} ms; "
          f"progress note seen: {seen_progress}")
