"""Document handlers: open, change (edits applied here, exactly per the LSP spec; the settled text is lowered in
the background), save (lowering in the worker), close, and pull diagnostics."""
from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from lsprotocol import types

from .textsync import BadRange, apply_change

if TYPE_CHECKING:
    from .language_server import TileLanguageServer
    from .state import DocState


def on_open(ls: TileLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    """Track the document now (before the next message is read); check it in the background."""
    td = params.text_document
    ls.background(_opened(ls, ls.state.open(td.uri, td.version, td.text)))


async def _opened(ls: TileLanguageServer, doc: DocState) -> None:
    await ls.publish(doc)
    if ls.configured and ls.settings.lowerOnSave and (await ls.result(doc)).kernels:
        ls.warm_worker()


def apply_edits(ls: TileLanguageServer, doc: DocState, changes) -> str:
    """The document's text after `changes` in order; a change with a range the spec does not allow is
    logged and skipped (the text stays as it was)."""
    text = doc.text
    for change in changes:
        rng = getattr(change, "range", None)
        if rng is None:
            text = change.text
            continue
        start, end = (rng.start.line, rng.start.character), (rng.end.line, rng.end.character)
        try:
            text = apply_change(text, start, end, change.text, ls.encoding)
        except BadRange as exc:
            ls.log(f"tilelsp: ignored an edit of {doc.uri} (version {doc.version}): {exc}")
    return text


def on_change(ls: TileLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    """Apply the edits now (before the next message is read), then re-check after `debounceMs` if
    `checkOnChange`; a document that was never opened is ignored (its text is unknown)."""
    doc = ls.state.get(params.text_document.uri)
    if doc is None:
        return
    ls.state.update(doc.uri, params.text_document.version, apply_edits(ls, doc, params.content_changes))
    if not ls.settings.checkOnChange:
        return
    version = doc.version

    async def job():
        if doc.version == version:  # a newer edit supersedes this one
            await ls.publish(doc)
            await _lower_when_settled(ls, doc, version)

    if ls.settings.debounceMs <= 0:
        ls.background(ls.publish(doc))
        ls.state.schedule(doc, 0, lambda: _lower_when_settled(ls, doc, version))
    else:
        ls.state.schedule(doc, ls.settings.debounceMs / 1000, job)


def on_save(ls: TileLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    """Re-check now; then lower every kernel in the worker and publish its findings as "tilelsp-lower"."""
    doc = ls.state.get(params.text_document.uri)
    if doc is None:
        return
    if params.text is not None:
        ls.state.update(doc.uri, doc.version, params.text)
    ls.background(_saved(ls, doc))


async def _saved(ls: TileLanguageServer, doc: DocState) -> None:
    await ls.publish(doc)
    if ls.settings.lowerOnSave and (await ls.result(doc)).kernels:
        await lower_document(ls, doc)


LOWER_SETTLE_S = 0.6  # quiet time after an edit's check before the edited text is lowered in the background


async def _lower_when_settled(ls: TileLanguageServer, doc: DocState, version: int) -> None:
    """Lower an edited document once the edits settle (no save needed), when it has kernels and no check errors: a
    newer edit cancels this (it runs in the document's pending job) and its lowering supersedes this one."""
    if not (ls.settings.lowerOnSave and ls.configured):
        return
    result = await ls.result(doc)
    if not result.kernels or any(d.is_error for d in result.diagnostics):
        return
    await asyncio.sleep(LOWER_SETTLE_S)
    if doc.version == version and doc.lower_version != version:
        await lower_document(ls, doc)


async def lower_document(ls: TileLanguageServer, doc: DocState) -> None:
    """Lower the current text in the worker (or take its lowering from the content cache); drop the answer if a
    newer lowering was asked for meanwhile."""
    from tilelsp.features.ir_view import diag_from_dict
    from .worker import WorkerError

    loop = asyncio.get_running_loop()
    version, doc.lower_requested, doc.lower_started = doc.version, doc.version, loop.time()
    key = (doc.text, tuple(ls.settings.targets))
    cached = ls.state.lowered.get(key)
    if cached is None:
        request = dict(text=doc.text, path=doc.path, targets=list(ls.settings.targets))
        try:
            reply = await loop.run_in_executor(None, lambda: ls.worker.request("lower", **request))
        except WorkerError as exc:
            if not ls.worker.closed:  # stopped by shutdown: nothing went wrong
                ls.log(f"tilelsp: lowering {doc.path} failed: {exc}")
            doc.lower_started = None
            return
        cached = (reply.get("entries", []), [diag_from_dict(d) for d in reply.get("diagnostics", [])])
        ls.state.remember_lowering(key, *cached)
    if ls.state.accept_lowering(doc, version, *cached):
        await ls.publish(doc, refresh=True)


def on_close(ls: TileLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    """Forget the document and clear its diagnostics."""
    uri = params.text_document.uri
    ls.state.close(uri)
    if not ls.pull_mode:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


async def on_pull_diagnostics(ls: TileLanguageServer, params: types.DocumentDiagnosticParams):
    """textDocument/diagnostic: the same merged set the push model would publish."""
    doc = ls.doc(params.text_document.uri)
    items = await ls.lsp_diagnostics(doc) if doc is not None else []
    return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=f"{doc.version if doc else 0}")
