"""Document sync against a reference model: random incremental edits (U+2028, form feed, surrogate pairs,
past-end, mid-character and reversed ranges) sent to the real server over stdio, its text compared with the
model after every batch; plus the spec's corner cases one by one. The long run is benchmarks/fuzz_lsp_edits.py."""
from __future__ import annotations

import random

import pytest
import pytest_lsp
from conftest import SERVER, open_doc, start
from edit_model import apply, random_change
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")
SETTINGS = {"tilelsp": {"debounceMs": 50, "lowerOnSave": False}}


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
async def sync_client(lsp_client: LanguageClient):
    """One UTF-16 server for the module (tests use distinct URIs)."""
    await start(lsp_client, settings=SETTINGS)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
async def utf8_sync_client(lsp_client: LanguageClient):
    """A server that negotiated UTF-8 positions."""
    await start(lsp_client, encodings=[types.PositionEncodingKind.Utf8], settings=SETTINGS)
    yield
    await lsp_client.shutdown_session()


def edit(client: LanguageClient, uri: str, version: int, *changes) -> None:
    """Send one didChange with `changes` applied in order."""
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=list(changes)))


def ranged(sl: int, sc: int, el: int, ec: int, text: str) -> types.TextDocumentContentChangePartial:
    """A ranged content change."""
    return types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(line=sl, character=sc), types.Position(line=el, character=ec)), text=text)


async def server_text(client: LanguageClient, uri: str) -> str:
    """The server's copy of a document."""
    return (await client.protocol.send_request_async("tilelsp/documentText", {"uri": uri})).text


async def fuzz(client: LanguageClient, uri: str, seed: int, batches: int, encoding: str) -> int:
    """Random batches of edits; the server's text must equal the model's after each. Returns edits sent."""
    rng, text, version, sent = random.Random(seed), "x = 1\n", 1, 0
    open_doc(client, uri, text)
    for _ in range(batches):
        for _ in range(rng.randrange(1, 5)):
            changes = []
            for _ in range(rng.randrange(1, 4)):
                change = random_change(rng, text, encoding)
                text = apply(text, change, encoding)
                changes.append(change)
            version += 1
            edit(client, uri, version, *changes)
            sent += len(changes)
        got = await server_text(client, uri)
        assert got == text, f"seed {seed}, version {version}: server {got!r} != model {text!r}"
    return sent


async def test_random_edits_match_the_model_utf16(sync_client):
    sent = await fuzz(sync_client, "file:///tmp/fuzz16.py", seed=16, batches=120, encoding="utf-16")
    assert sent > 400


async def test_random_edits_match_the_model_utf8(utf8_sync_client):
    sent = await fuzz(utf8_sync_client, "file:///tmp/fuzz8.py", seed=8, batches=50, encoding="utf-8")
    assert sent > 150


async def test_spec_corner_cases(sync_client):
    uri = "file:///tmp/corners.py"
    open_doc(sync_client, uri, "x = 1")
    edit(sync_client, uri, 2, ranged(0, 99, 0, 99, "2"))  # past the line's end: the line's end
    assert await server_text(sync_client, uri) == "x = 12"
    edit(sync_client, uri, 3, ranged(0, 0, 0, 0, "a\u2028b\x0cc\n"), ranged(1, 0, 1, 1, "X"))
    assert await server_text(sync_client, uri) == "a\u2028b\x0cc\nX = 12"  # U+2028 and \f are not line breaks
    edit(sync_client, uri, 4, ranged(7, 3, 9, 0, "!"))  # past the last line: the document's end
    assert await server_text(sync_client, uri) == "a\u2028b\x0cc\nX = 12!"
    edit(sync_client, uri, 5, ranged(0, 0, 1, 0, "😀\r"), ranged(0, 1, 0, 1, "?"))  # mid-surrogate rounds down
    assert await server_text(sync_client, uri) == "?😀\rX = 12!"


async def test_reversed_range_is_refused_and_logged(sync_client):
    uri = "file:///tmp/reversed.py"
    open_doc(sync_client, uri, "abc\ndef\n")
    edit(sync_client, uri, 2, ranged(1, 2, 0, 1, "ZZ"), ranged(0, 0, 0, 0, ">"))
    assert await server_text(sync_client, uri) == ">abc\ndef\n"  # the bad change is skipped, the next applies
    assert any("ignored an edit" in m.message and "before its start" in m.message for m in sync_client.log_messages)


async def test_change_to_an_unknown_document_is_ignored_quietly(sync_client):
    before = len(sync_client.log_messages)
    edit(sync_client, "file:///tmp/never-opened.py", 3, ranged(0, 0, 0, 0, "x"))
    status = await sync_client.protocol.send_request_async("tilelsp/status", {})
    assert "file:///tmp/never-opened.py" not in status.documents
    assert not [m for m in sync_client.log_messages[before:] if m.type == types.MessageType.Error]
