"""End-to-end verify/benchmark commands: refused until the workspace is trusted; when trusted, user code
runs only in a subprocess, so factories that loop forever or raise are reported and the server lives on."""
from __future__ import annotations

import asyncio

import pytest
from conftest import ROOT, diagnostics, open_doc
from lsprotocol import types

HOSTILE = {
    "loops": "    while True:\n        pass\n",
    "raises": "    raise RuntimeError('factory exploded')\n",
}


def _trust(client, **extra):
    client.set_configuration({"tilelsp": {"debounceMs": 0, "lowerOnSave": False, "trustWorkspace": True,
                                          "verifyDevice": "cpu", **extra}})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))


@pytest.mark.asyncio
async def test_verify_refused_in_untrusted_workspace(client):
    uri = (ROOT / "examples/elementwise_add.py").as_uri()
    open_doc(client, uri, (ROOT / "examples/elementwise_add.py").read_text())
    await diagnostics(client, uri)
    res = await client.workspace_execute_command_async(types.ExecuteCommandParams("tilelsp.server.verify", [uri, "add"]))
    assert res["passed"] is False and "trustWorkspace" in res["message"]
    assert any("trustWorkspace" in m.message for m in client.messages)


@pytest.mark.tvm
@pytest.mark.slow
@pytest.mark.asyncio
@pytest.mark.parametrize("kind", sorted(HOSTILE))
async def test_hostile_factory_in_verify_is_contained(client, tmp_path, kind):
    src = (ROOT / "examples/elementwise_add.py").read_text()
    head, sep, tail = src.partition("    @T.prim_func\n")
    path = tmp_path / f"{kind}.py"
    path.write_text(head + HOSTILE[kind] + sep + tail)
    _trust(client, workerTimeoutSec=20)
    uri = path.as_uri()
    open_doc(client, uri, path.read_text())
    await diagnostics(client, uri)
    res = await client.workspace_execute_command_async(types.ExecuteCommandParams("tilelsp.server.verify", [uri, "add"]))
    assert res["passed"] is False and res["message"]
    got = await diagnostics(client, uri, 1, lambda ds: any(d.source == "tilelsp-verify" for d in ds))
    assert [d.code for d in got.diagnostics if d.source == "tilelsp-verify"] == ["verify-failed"]
    status = await client.protocol.send_request_async("tilelsp/status", {})
    assert status.tvmLoaded is False  # verify ran in a subprocess


@pytest.mark.tvm
@pytest.mark.slow
@pytest.mark.asyncio
async def test_verify_passes_on_cpu_with_progress(client):
    _trust(client, workerTimeoutSec=240)
    path = ROOT / "examples/elementwise_add.py"
    uri = path.as_uri()
    open_doc(client, uri, path.read_text())
    await diagnostics(client, uri)
    res = await client.workspace_execute_command_async(types.ExecuteCommandParams("tilelsp.server.verify", [uri, "add"]))
    assert res["passed"] is True and res["device"] == "cpu", res
    assert client.progress_reports  # $/progress begin/end were reported
    got = await diagnostics(client, uri, 1, lambda ds: any(d.source == "tilelsp-verify" for d in ds))
    assert [d.code for d in got.diagnostics if d.source == "tilelsp-verify"] == ["verify-passed"]


@pytest.mark.asyncio
async def test_verify_is_cancellable_through_progress(client, tmp_path):
    src = (ROOT / "examples/elementwise_add.py").read_text()
    head, sep, tail = src.partition("    @T.prim_func\n")
    path = tmp_path / "forever.py"
    path.write_text(head + HOSTILE["loops"] + sep + tail)
    _trust(client, workerTimeoutSec=600)
    await client.protocol.send_request_async("tilelsp/status", {})
    uri = path.as_uri()
    open_doc(client, uri, path.read_text())
    await diagnostics(client, uri)
    task = asyncio.ensure_future(client.workspace_execute_command_async(
        types.ExecuteCommandParams("tilelsp.server.verify", [uri, "add"])))
    begin = await client.wait_for_notification(types.PROGRESS)
    value = begin.value if isinstance(begin.value, dict) else begin.value.__dict__
    assert value["kind"] == "begin" and value["cancellable"]
    client.window_work_done_progress_cancel(types.WorkDoneProgressCancelParams(token=begin.token))
    res = await asyncio.wait_for(task, 60)
    assert res["passed"] is False and "cancelled" in res["message"]


@pytest.mark.asyncio
async def test_shutdown_while_a_verify_runs(client, tmp_path):
    """Shutdown with a verify in flight: the pending request is cancelled and shutdown still answers."""
    src = (ROOT / "examples/elementwise_add.py").read_text()
    head, sep, tail = src.partition("    @T.prim_func\n")
    path = tmp_path / "forever2.py"
    path.write_text(head + HOSTILE["loops"] + sep + tail)
    _trust(client, workerTimeoutSec=600)
    await client.protocol.send_request_async("tilelsp/status", {})
    open_doc(client, path.as_uri(), path.read_text())
    task = asyncio.ensure_future(client.workspace_execute_command_async(
        types.ExecuteCommandParams("tilelsp.server.verify", [path.as_uri(), "add"])))
    await client.wait_for_notification(types.PROGRESS)
    await asyncio.wait_for(client.shutdown_async(None), 30)
    client.exit(None)
    client.capabilities = None  # the session is over: the fixture must not shut down twice
    task.cancel()
