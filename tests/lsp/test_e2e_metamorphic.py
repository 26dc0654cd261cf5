"""End-to-end metamorphic command: offered as a code action on a kernel, run as `tilelsp verify --metamorphic` in a
subprocess (trusted workspaces only); a kernel that gives another answer at another tile size comes back as a
diagnostic at the line that causes it (an rmsnorm that scales every row by row 0's norm, with no reference)."""
from __future__ import annotations

from pathlib import Path

import pytest
from conftest import diagnostics, open_doc
from lsprotocol import types

BUGGY = (Path(__file__).resolve().parents[1] / "verify/oracle_cases/bugs/rmsnorm_first_row_scale.py").read_text()
BUG_LINE = next(k for k, ln in enumerate(BUGGY.splitlines()) if "* inv_rms[0] *" in ln)  # 0-based, as LSP counts


@pytest.mark.tvm
@pytest.mark.slow
@pytest.mark.asyncio
async def test_metamorphic_is_offered_and_reports_the_line(client, tmp_path):
    client.set_configuration({"tilelsp": {"debounceMs": 0, "lowerOnSave": False, "trustWorkspace": True,
                                          "verifyDevice": "cpu", "workerTimeoutSec": 240}})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    path = tmp_path / "rms.py"
    path.write_text(BUGGY)
    uri = path.as_uri()
    open_doc(client, uri, BUGGY)
    await diagnostics(client, uri)
    acts = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), types.Range(types.Position(BUG_LINE, 4), types.Position(BUG_LINE, 4)),
        types.CodeActionContext(diagnostics=[])))
    assert any("tilelsp.server.metamorphic" in str(a.command) for a in acts)
    res = await client.workspace_execute_command_async(types.ExecuteCommandParams("tilelsp.server.metamorphic",
                                                                                  [uri, "rmsnorm"]))
    assert res["passed"] is False and res["device"] == "cpu", res["message"]
    got = await diagnostics(client, uri, 1, lambda ds: any(d.source == "tilelsp-verify" for d in ds))
    mine = [d for d in got.diagnostics if d.source == "tilelsp-verify"]
    assert {(d.code, d.range.start.line) for d in mine} == {("metamorphic-config-mismatch", BUG_LINE)}
