"""End-to-end Sanitize command: offered as a code action on a kernel, run as `tilelsp verify --sanitize` in a
subprocess (trusted workspaces only, with progress); its findings come back as diagnostics at their own lines
(here a shared-memory read shifted by data past the tile's edge, which no static check can decide)."""
from __future__ import annotations

import pytest
from conftest import diagnostics, open_doc
from lsprotocol import types

BUGGY = '''import tilelang
import tilelang.language as T


@tilelang.jit(out_idx=[-1])
def double(M=100, N=64, block=64):
    @T.prim_func
    def dbl(A: T.Tensor((M, N), "float32"), Shift: T.Tensor((N,), "int32"), C: T.Tensor((M, N), "float32")):
        with T.Kernel(T.ceildiv(M, block), threads=128) as bx:
            S = T.alloc_shared((block, N), "float32")
            T.copy(A[bx * block, 0], S)
            for i, j in T.Parallel(block, N):
                C[bx * block + i, j] = S[i, j + Shift[j]] * 2.0

    return dbl


kernel = double()
'''


def _trust(client):
    client.set_configuration({"tilelsp": {"debounceMs": 0, "lowerOnSave": False, "trustWorkspace": True,
                                          "verifyDevice": "cpu", "workerTimeoutSec": 240}})
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))


@pytest.mark.asyncio
async def test_sanitize_is_offered_on_a_kernel(client, tmp_path):
    path = tmp_path / "dbl.py"
    path.write_text(BUGGY)
    uri = path.as_uri()
    open_doc(client, uri, BUGGY)
    await diagnostics(client, uri)
    acts = await client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), types.Range(types.Position(12, 4), types.Position(12, 4)),
        types.CodeActionContext(diagnostics=[])))
    # lsprotocol's client-side hook structures any action carrying a command as a Command; read it as text
    sanitize = [str(a.command) for a in acts if "tilelsp.server.sanitize" in str(a.command)]
    assert len(sanitize) == 1 and uri in sanitize[0] and "'dbl'" in sanitize[0]


@pytest.mark.tvm
@pytest.mark.slow
@pytest.mark.asyncio
async def test_sanitize_reports_out_of_bounds_at_the_line(client, tmp_path):
    _trust(client)
    path = tmp_path / "dbl.py"
    path.write_text(BUGGY)
    uri = path.as_uri()
    open_doc(client, uri, BUGGY)
    await diagnostics(client, uri)
    res = await client.workspace_execute_command_async(types.ExecuteCommandParams("tilelsp.server.sanitize",
                                                                                  [uri, "dbl"]))
    assert res["passed"] is False and res["device"] == "cpu", res
    assert {f["code"] for f in res["findings"]} == {"sanitize-out-of-bounds"}
    assert client.progress_reports
    got = await diagnostics(client, uri, 1, lambda ds: any(d.source == "tilelsp-verify" for d in ds))
    mine = [d for d in got.diagnostics if d.source == "tilelsp-verify"]
    assert {(d.code, d.range.start.line) for d in mine} == {("sanitize-out-of-bounds", 12)}
    assert any("is outside S of shape (64, 64) (shared memory, first in block (bx=0))" in d.message for d in mine)
