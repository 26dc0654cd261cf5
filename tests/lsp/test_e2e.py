"""End-to-end: the real server over stdio (pytest-lsp), never sleeping: every wait is for a notification."""
from __future__ import annotations

import pytest
from conftest import ROOT, change_doc, diagnostics, open_doc
from lsprotocol import types

pytestmark = pytest.mark.asyncio(loop_scope="module")


SMEM = (ROOT / "examples/errors/shared_memory_exceeded.py").read_text()


def _line_of(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines()) if needle in line)


async def test_several_errors_one_publish_then_fixed(shared_client):
    uri = "file:///tmp/several.py"
    text = SMEM.replace("threads=128", "threads=2048")
    open_doc(shared_client, uri, text)
    got = await diagnostics(shared_client, uri, 1, lambda ds: len(ds) >= 2)
    codes = {d.code: d for d in got.diagnostics}
    assert {"shared-memory-exceeded", "threads-exceeded"} <= set(codes)
    assert got.version == 1
    t = codes["threads-exceeded"]
    line = _line_of(text, "threads=2048")
    assert t.range.start.line == line and t.source == "tilelsp"
    assert text.splitlines()[line][t.range.start.character:t.range.end.character] == "2048"
    assert t.code_description.href.endswith("diagnostics.md#threads-exceeded")
    fixed = text.replace("threads=2048", "threads=128").replace("num_stages=4", "num_stages=2")
    change_doc(shared_client, uri, fixed, 2)
    cleared = await diagnostics(shared_client, uri, 2)
    assert cleared.version == 2 and not cleared.diagnostics


async def test_syntax_error_mid_edit_does_not_crash(shared_client):
    uri = "file:///tmp/typing.py"
    open_doc(shared_client, uri, SMEM)
    await diagnostics(shared_client, uri)
    broken = SMEM.replace("for k in T.Pipelined(T.ceildiv(K, block_K), num_stages=num_stages):",
                          "for k in T.Pipelined(T.ceildiv(K, block_K), num_st")
    change_doc(shared_client, uri, broken, 2)
    got = await diagnostics(shared_client, uri, 2)
    assert [d.code for d in got.diagnostics] == ["syntax-error"]
    hover = await shared_client.text_document_hover_async(types.HoverParams(
        types.TextDocumentIdentifier(uri), types.Position(line=0, character=0)))
    assert hover is None
    change_doc(shared_client, uri, SMEM, 3)
    again = await diagnostics(shared_client, uri, 3)
    assert again.version == 3 and [d.code for d in again.diagnostics] == ["shared-memory-exceeded"]


async def test_hover_buffer_kernel_and_builtin(shared_client):
    uri = (ROOT / "examples/gemm.py").as_uri()
    text = (ROOT / "examples/gemm.py").read_text()
    open_doc(shared_client, uri, text)
    await diagnostics(shared_client, uri)
    line = _line_of(text, "A_shared = T.alloc_shared")
    col = text.splitlines()[line].index("A_shared")

    async def hover(line, col):
        h = await shared_client.text_document_hover_async(types.HoverParams(
            types.TextDocumentIdentifier(uri), types.Position(line=line, character=col)))
        return h.contents.value if h else None

    assert "shared.dyn" in await hover(line, col + 2)
    kline = _line_of(text, "with T.Kernel(")
    assert "threads" in await hover(kline, text.splitlines()[kline].index("T.Kernel") + 3)
    cline = _line_of(text, "T.clear(C_local)")
    assert "T.clear" in await hover(cline, text.splitlines()[cline].index("clear") + 1)


async def test_kernels_request_and_code_action(shared_client):
    uri = "file:///tmp/smem.py"
    open_doc(shared_client, uri, SMEM)
    got = await diagnostics(shared_client, uri)
    res = await shared_client.protocol.send_request_async("tilelsp/kernels", {"textDocument": {"uri": uri}})
    kernels = res.kernels
    assert [k.name for k in kernels] == ["main"] and "cuda" in kernels[0].stages
    assert kernels[0].nameRange.start.line == _line_of(SMEM, "def main(")
    assert kernels[0].range.start.line == _line_of(SMEM, "def main(")
    assert kernels[0].range.end.line == _line_of(SMEM, "T.copy(C_local, C[")  # the whole kernel body
    diag = got.diagnostics[0]
    actions = await shared_client.text_document_code_action_async(types.CodeActionParams(
        types.TextDocumentIdentifier(uri), diag.range, types.CodeActionContext(diagnostics=[diag])))
    fix = next(a for a in actions if a.kind == types.CodeActionKind.QuickFix)
    edit = fix.edit.changes[uri][0]
    assert edit.new_text == "3" and edit.range.start.line == _line_of(SMEM, "num_stages=4):")
    # lsprotocol's shared_client-side hook structures any action carrying a command as a Command; read it as text
    commands = " ".join(str(a.command) for a in actions if a.command)
    assert "tilelsp.server.verify" in commands and "tilelsp.server.benchmark" in commands


async def test_inlay_lens_completion_signature_over_the_wire(shared_client):
    path = ROOT / "examples/gemm.py"
    uri, text = path.as_uri(), path.read_text()
    lines = text.splitlines()
    open_doc(shared_client, uri, text)
    await diagnostics(shared_client, uri)
    ident = types.TextDocumentIdentifier(uri)
    whole = types.Range(types.Position(0, 0), types.Position(len(lines), 0))
    hints = await shared_client.text_document_inlay_hint_async(types.InlayHintParams(ident, whole))
    by_line = {h.position.line: h.label for h in hints}
    a_line = _line_of(text, "A_shared = T.alloc_shared")
    assert "shared.dyn 128×32 float16" in by_line[a_line] and by_line[a_line].endswith("×3 stages")
    lenses = await shared_client.text_document_code_lens_async(types.CodeLensParams(ident))
    assert [l.command.command for l in lenses] == ["tilelsp.verify", "tilelsp.showIR", "tilelsp.showCuda",
                                                   "tilelsp.showLayout", "tilelsp.benchmark"]
    assert list(lenses[0].command.arguments) == [uri, "gemm"] and lenses[0].range.start.line == _line_of(text, "def gemm(")
    line = _line_of(text, "T.clear(C_local)")
    col = lines[line].index("clear")
    items = await shared_client.text_document_completion_async(types.CompletionParams(
        ident, types.Position(line, col + 2)))
    labels = {i.label for i in items.items}
    assert "clear" in labels and all(label.startswith("cl") for label in labels)  # the cursor is after "T.cl"
    sig = await shared_client.text_document_signature_help_async(types.SignatureHelpParams(
        ident, types.Position(line, col + len("clear("))))
    assert sig.signatures[0].label.startswith("T.clear(") and sig.active_parameter == 0


async def test_semantic_tokens_over_the_wire(shared_client):
    uri = (ROOT / "examples/gemm.py").as_uri()
    tokens = await shared_client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(types.TextDocumentIdentifier(uri)))
    assert tokens.data and len(tokens.data) % 5 == 0


async def test_keystroke_path_never_imported_tvm_or_torch(shared_client):
    """After opens, edits, hovers, inlay hints, lenses, completion and kernels on the same server (this test
    does its own, so it holds whichever xdist worker runs it), neither tvm nor torch is loaded and no worker ran."""
    uri = "file:///tmp/keystrokes.py"
    open_doc(shared_client, uri, SMEM)
    await diagnostics(shared_client, uri)
    change_doc(shared_client, uri, SMEM.replace("threads=128", "threads=256"), 2)
    await diagnostics(shared_client, uri, 2)
    doc = types.TextDocumentIdentifier(uri=uri)
    line = _line_of(SMEM, "T.Kernel")
    pos = types.Position(line=line, character=SMEM.splitlines()[line].index("T.Kernel") + 3)
    whole = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=line + 20, character=0))
    await shared_client.text_document_hover_async(types.HoverParams(text_document=doc, position=pos))
    await shared_client.text_document_inlay_hint_async(types.InlayHintParams(text_document=doc, range=whole))
    await shared_client.text_document_code_lens_async(types.CodeLensParams(text_document=doc))
    await shared_client.text_document_completion_async(types.CompletionParams(text_document=doc, position=pos))
    await shared_client.protocol.send_request_async("tilelsp/kernels", {"textDocument": {"uri": uri}})
    status = await shared_client.protocol.send_request_async("tilelsp/status", {})
    assert uri in status.documents
    assert status.tvmLoaded is False and status.torchLoaded is False and status.workerPid is None
