"""End-to-end: position encodings with non-ASCII text, and settings from workspace/configuration."""
from __future__ import annotations

import pytest
from conftest import SMEM_TEXT, change_doc, diagnostics, open_doc
from lsprotocol import types

# Identifiers with a non-BMP letter (𝔑: 2 UTF-16 units, 4 UTF-8 bytes; Python folds it to N) and a
# Latin-1 one (Ñ: 1 UTF-16 unit, 2 UTF-8 bytes) before the error on the same line.
NON_ASCII = (SMEM_TEXT.replace("block_N", "block_𝔑").replace("block_M", "block_Ñ")
             .replace("threads=128", "threads=2048"))


def _threads(diags):
    return next(d for d in diags if d.code == "threads-exceeded")


@pytest.mark.asyncio
async def test_utf16_vs_utf8_columns_with_non_ascii(client, utf8_client):
    uri = "file:///tmp/enc.py"
    line_text = next(l for l in NON_ASCII.splitlines() if "threads=2048" in l)
    cp = line_text.index("2048")
    open_doc(client, uri, NON_ASCII)
    d16 = _threads((await diagnostics(client, uri, 1, lambda ds: len(ds) >= 2)).diagnostics)
    open_doc(utf8_client, uri, NON_ASCII)
    d8 = _threads((await diagnostics(utf8_client, uri, 1, lambda ds: len(ds) >= 2)).diagnostics)
    assert d16.range.start.character == cp + 1  # 𝔑 is a surrogate pair
    assert d8.range.start.character == len(line_text[:cp].encode("utf-8")) == cp + 4
    assert d16.range.end.character - d16.range.start.character == 4 == d8.range.end.character - d8.range.start.character
    status = await utf8_client.protocol.send_request_async("tilelsp/status", {})
    assert status.encoding == "utf-8"
    # hover at the UTF-8 position of `T.gemm` on a line with no non-ASCII resolves the same builtin
    gl = next(i for i, l in enumerate(NON_ASCII.splitlines()) if "T.gemm" in l)
    col = NON_ASCII.splitlines()[gl].index("gemm")
    for c in (client, utf8_client):
        h = await c.text_document_hover_async(types.HoverParams(types.TextDocumentIdentifier(uri),
                                                                types.Position(line=gl, character=col)))
        assert "T.gemm(" in h.contents.value


@pytest.mark.asyncio
async def test_settings_change_turns_off_check_on_change(client):
    uri = "file:///tmp/settings.py"
    open_doc(client, uri, SMEM_TEXT)
    assert (await diagnostics(client, uri)).diagnostics
    client.set_configuration({"tilelsp": {"checkOnChange": False, "debounceMs": 0, "targets": "sm_80", "lowerOnSave": False}})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    got = await diagnostics(client, uri, 1, lambda ds: any("[sm_80]" in d.message for d in ds))  # new targets
    status = await client.protocol.send_request_async("tilelsp/status", {})
    assert status.targets == ["sm_80"]
    assert any("[sm_80]" in d.message for d in got.diagnostics)
    change_doc(client, uri, SMEM_TEXT.replace("threads=128", "threads=2048"), 2)
    client.text_document_did_save(types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri)))
    saved = await diagnostics(client, uri, 2)  # nothing on change; the save checks
    assert "threads-exceeded" in {d.code for d in saved.diagnostics}


@pytest.mark.asyncio
async def test_invalid_settings_are_logged(client):
    client.set_configuration({"tilelsp": {"debounceMs": "soon", "verifyDevice": "tpu"}})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    msg = await client.wait_for_notification(types.WINDOW_LOG_MESSAGE)
    while "tilelsp.debounceMs" not in msg.message:
        msg = await client.wait_for_notification(types.WINDOW_LOG_MESSAGE)
    assert "using 200" in msg.message


@pytest.mark.asyncio
async def test_debounce_publishes_only_the_last_of_quick_edits(client):
    client.set_configuration({"tilelsp": {"debounceMs": 1500, "lowerOnSave": False}})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await client.protocol.send_request_async("tilelsp/status", {})  # settings applied before we edit
    uri = "file:///tmp/debounce.py"
    open_doc(client, uri, SMEM_TEXT)
    await diagnostics(client, uri)
    for version, threads in ((2, 256), (3, 2048), (4, 100)):
        change_doc(client, uri, SMEM_TEXT.replace("threads=128", f"threads={threads}"), version)
    last = await diagnostics(client, uri, 4)
    assert "threads-not-warp-multiple" in {d.code for d in last.diagnostics}
    assert not [p for p in client.published if p.uri == uri and p.version in (2, 3)]


@pytest.mark.asyncio
async def test_pull_diagnostics(pull_client):
    uri = "file:///tmp/pull.py"
    open_doc(pull_client, uri, SMEM_TEXT)
    report = await pull_client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri)))
    assert [d.code for d in report.items] == ["shared-memory-exceeded"]
    assert uri not in pull_client.diagnostics  # pull clients are not pushed to
