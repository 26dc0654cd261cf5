"""The server survives bad input: invalid JSON-RPC, unknown documents, out-of-range positions, a 10 MB
file, kernel factories that loop/raise/allocate (never executed on the check path), and never imports
tvm or torch on the keystroke path."""
from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
import pytest_lsp
from conftest import SERVER, change_doc, diagnostics, open_doc, start
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

pytestmark = pytest.mark.asyncio(loop_scope="module")

FACTORIES = '''import tilelang
import tilelang.language as T

def forever(N):
    while True:
        pass

def raises(N):
    raise RuntimeError("boom")

def hog(N):
    x = [0] * (1 << 40)

@tilelang.jit
def scale(N, block=128):
    forever(N); raises(N); hog(N)
    @T.prim_func
    def main(X: T.Tensor((N,), T.float32)):
        with T.Kernel(T.ceildiv(N, block), threads=block) as bx:
            x = T.alloc_fragment((block,), T.float32)
            T.copy(X[bx * block], x)
    return main

kernel = scale(4096)
'''


async def test_hostile_factories_are_never_run_on_the_check_path(shared_client):
    uri = "file:///tmp/hostile.py"
    open_doc(shared_client, uri, FACTORIES)
    got = await diagnostics(shared_client, uri)
    assert all(d.severity != types.DiagnosticSeverity.Error for d in got.diagnostics)
    status = await shared_client.protocol.send_request_async("tilelsp/status", {})
    assert status.tvmLoaded is False and status.torchLoaded is False and status.workerPid is None


async def test_unknown_document_and_out_of_range_positions(shared_client):
    unknown = types.TextDocumentIdentifier("file:///nowhere/missing.py")
    far = types.Position(line=10_000, character=10_000)
    assert await shared_client.text_document_hover_async(types.HoverParams(unknown, far)) is None
    assert not await shared_client.text_document_code_lens_async(types.CodeLensParams(unknown))
    with pytest.raises(Exception, match="unknown document"):
        await shared_client.protocol.send_request_async("tilelsp/kernels", {"textDocument": {"uri": unknown.uri}})
    uri = "file:///tmp/range.py"
    open_doc(shared_client, uri, "import tilelang.language as T\nx = T.copy\n")
    await diagnostics(shared_client, uri)
    ident = types.TextDocumentIdentifier(uri)
    assert await shared_client.text_document_hover_async(types.HoverParams(ident, far)) is None
    rng = types.Range(types.Position(5000, 0), types.Position(9000, 3))
    assert not await shared_client.text_document_inlay_hint_async(types.InlayHintParams(ident, rng))
    help_ = await shared_client.text_document_signature_help_async(types.SignatureHelpParams(ident, far))
    assert help_ is None
    assert uri in (await shared_client.protocol.send_request_async("tilelsp/status", {})).documents


async def test_ten_megabyte_file_is_capped(shared_client):
    uri = "file:///tmp/huge.py"
    open_doc(shared_client, uri, "x = 1  # padding\n" * 650_000)  # ~11 MB
    got = await diagnostics(shared_client, uri)
    assert [d.code for d in got.diagnostics] == ["file-too-large"]
    assert got.diagnostics[0].severity == types.DiagnosticSeverity.Information
    change_doc(shared_client, uri, "import tilelang.language as T\n", 2)
    assert not (await diagnostics(shared_client, uri, 2)).diagnostics


async def _frame(proc) -> dict:
    header = b""
    while not header.endswith(b"\r\n\r\n"):
        header += await proc.stdout.read(1)
    length = int(next(l for l in header.decode().split("\r\n") if l.lower().startswith("content-length")).split(":")[1])
    return json.loads(await proc.stdout.readexactly(length))


def _send(proc, payload: bytes) -> None:
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(payload) + payload)


async def test_invalid_json_rpc_then_serves():
    proc = await asyncio.create_subprocess_exec(*SERVER, stdin=asyncio.subprocess.PIPE,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    try:
        _send(proc, b"{this is not json")
        _send(proc, json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                "params": {"capabilities": {}, "processId": None}}).encode())
        _send(proc, json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tilelsp/noSuchMethod", "params": {}}).encode())
        _send(proc, json.dumps({"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover",
                                "params": {"textDocument": 5}}).encode())
        _send(proc, json.dumps({"jsonrpc": "2.0", "id": 4, "method": "shutdown"}).encode())
        seen = {}
        while 4 not in seen:
            msg = await asyncio.wait_for(_frame(proc), 20)
            if "id" in msg and "method" not in msg:
                seen[msg["id"]] = msg
        assert "capabilities" in seen[1]["result"]
        assert seen[2]["error"]["code"] == -32601
        assert "error" in seen[3]
        assert seen[4]["result"] is None
    finally:
        proc.kill()
        await proc.wait()


async def _connect(port: int):
    """Connect once the server listens (the log line comes just before the socket opens: retry refusals)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + 30
    while True:
        try:
            return await asyncio.open_connection("127.0.0.1", port)
        except OSError:
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.02)  # connection retry only; no result is awaited by sleeping


async def test_tcp_mode_serves():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = await asyncio.create_subprocess_exec(*SERVER, "--tcp", f"127.0.0.1:{port}",
                                                stderr=asyncio.subprocess.PIPE)
    try:
        line = await asyncio.wait_for(proc.stderr.readline(), 30)
        assert b"listening on 127.0.0.1" in line
        reader, writer = await _connect(port)
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                           "params": {"capabilities": {}, "processId": None}}).encode()
        writer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        header = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
        length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
        reply = json.loads(await reader.readexactly(length))
        assert reply["id"] == 1 and reply["result"]["serverInfo"]["name"] == "tilelsp"
        writer.close()
    finally:
        proc.kill()
        await proc.wait()


HUNG_WORKER = ClientServerConfig(server_command=SERVER, server_env={
    **os.environ, "HANG_OPS": "show_ir,lower",
    "TILELSP_WORKER_CMD": f"{sys.executable} {Path(__file__).with_name('misbehaving_worker.py')}"})


@pytest_lsp.fixture(config=HUNG_WORKER, scope="module")
async def hung_worker_client(lsp_client: LanguageClient):
    """A server whose worker hangs on every lowering request."""
    await start(lsp_client, settings={"tilelsp": {"debounceMs": 0, "lowerOnSave": False, "workerTimeoutSec": 1}})
    yield
    await lsp_client.shutdown_session()


async def test_hung_worker_is_reported_and_the_server_keeps_serving(hung_worker_client):
    client = hung_worker_client
    uri = "file:///tmp/hung.py"
    text = (Path(__file__).resolve().parents[2] / "examples/gemm.py").read_text()
    open_doc(client, uri, text)
    await diagnostics(client, uri)
    with pytest.raises(Exception, match="timed out"):
        await client.protocol.send_request_async("tilelsp/showIR", {"uri": uri, "kernel": "gemm", "stage": "cuda"})
    assert any("timed out" in m.message and "replaced" in m.message for m in client.log_messages)
    hover = await client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(0, 0)))
    assert hover is None or hover.contents  # still answering
    change_doc(client, uri, text.replace("threads=128", "threads=2048"), 2)
    assert "threads-exceeded" in {d.code for d in (await diagnostics(client, uri, 2)).diagnostics}
    status = await client.protocol.send_request_async("tilelsp/status", {})
    assert status.workerPid is None  # the hung one was killed; the next request starts a fresh one
