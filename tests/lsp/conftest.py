"""Fixtures that drive the real server over stdio with pytest-lsp, and helpers that wait for notifications."""
from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

ROOT = Path(__file__).resolve().parents[2]
SERVER = [sys.executable, "-m", "tilelsp", "serve"]
PUBLISH = types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
CONFIG = {"tilelsp": {"debounceMs": 0, "lowerOnSave": False}}


def capabilities(encodings=None, pull=False) -> types.ClientCapabilities:
    """Client capabilities of a modern editor; `encodings` offered in order; pull diagnostics optional."""
    md = [types.MarkupKind.Markdown, types.MarkupKind.PlainText]
    return types.ClientCapabilities(
        general=types.GeneralClientCapabilities(position_encodings=encodings),
        text_document=types.TextDocumentClientCapabilities(
            publish_diagnostics=types.PublishDiagnosticsClientCapabilities(
                related_information=True, version_support=True, code_description_support=True, data_support=True),
            hover=types.HoverClientCapabilities(content_format=md),
            completion=types.CompletionClientCapabilities(
                completion_item=types.ClientCompletionItemOptions(documentation_format=md)),
            diagnostic=types.DiagnosticClientCapabilities() if pull else None),
        workspace=types.WorkspaceClientCapabilities(
            configuration=True, diagnostics=types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)),
        window=types.WindowClientCapabilities(work_done_progress=True))


def _record(client: LanguageClient) -> None:
    """Keep every publishDiagnostics (pytest-lsp keeps only the last diagnostics, without the version)."""
    original = client.protocol._handle_notification
    client.published = []

    def handle(method, params):
        if method == PUBLISH:
            client.published.append(params)
        return original(method, params)

    client.protocol._handle_notification = handle


async def start(client: LanguageClient, encodings=None, pull=False, settings=None):
    """Initialize a session with our capabilities and settings (served through workspace/configuration)."""
    _record(client)
    client.set_configuration(settings or CONFIG)
    result = await client.initialize_session(types.InitializeParams(
        capabilities=capabilities(encodings, pull), root_uri=ROOT.as_uri()))
    return result


async def diagnostics(client: LanguageClient, uri: str, version: int = 1, predicate=lambda ds: True,
                      timeout: float = 20):
    """The first publish for `uri` at `version` that satisfies `predicate`, already received or awaited
    (no sleeping)."""
    def match(params):
        return params.uri == uri and params.version == version and predicate(params.diagnostics)

    async def wait():
        seen = next((p for p in client.published if match(p)), None)
        if seen is not None:
            return seen
        while True:
            params = await client.wait_for_notification(PUBLISH)
            if params.uri == uri and params.version == version and predicate(params.diagnostics):
                return params

    return await asyncio.wait_for(wait(), timeout)


def open_doc(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    """Send didOpen."""
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)))


def change_doc(client: LanguageClient, uri: str, text: str, version: int) -> None:
    """Send a full-text didChange."""
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def client(lsp_client: LanguageClient):
    """A server speaking UTF-16 with push diagnostics and no debounce."""
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER), scope="module")
async def shared_client(lsp_client: LanguageClient):
    """One server for a whole test module (tests use distinct URIs and leave settings alone)."""
    await start(lsp_client)
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def utf8_client(lsp_client: LanguageClient):
    """A server that negotiated UTF-8 positions."""
    await start(lsp_client, encodings=[types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16])
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER))
async def pull_client(lsp_client: LanguageClient):
    """A client that asks for diagnostics (textDocument/diagnostic)."""
    await start(lsp_client, pull=True)
    yield
    await lsp_client.shutdown_session()


SMEM_TEXT = (ROOT / "examples/errors/shared_memory_exceeded.py").read_text()
