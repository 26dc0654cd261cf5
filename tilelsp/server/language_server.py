"""The tilelsp language server object: pygls plumbing, the message loop, the documents' state, settings and worker,
and publishing diagnostics. The handlers (lifecycle.py, documents.py, navigation.py, commands.py) are registered on
it by app.py.

Fast diagnostics (source "tilelsp") come from the pure-Python check, run off the event loop in check child
processes (checks.py) with a per-document deadline; lowering on save ("tilelsp-lower"), IR views and verify
("tilelsp-verify") run in worker processes.
"""
from __future__ import annotations

import asyncio
import itertools
import logging
import os
import sys
import threading

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method

from tilelang_core import __version__
from tilelang_core.suppress import drop_suppressed

from tilelsp.features import positions as pos
from tilelsp.features.diagnostics import FAST, LOWER, VERIFY, to_lsp

from . import framing
from .settings import Settings
from .state import DocState, State

log = logging.getLogger("tilelsp")


_ANSWERED = object()


class _Protocol(LanguageServerProtocol):
    """pygls' protocol, except that a request whose params do not validate gets an error response
    (JSON-RPC -32602) instead of no answer at all."""

    def structure_message(self, data):
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "id" in data and "method" in data:
                self._send_response(data["id"], error=exc.to_response_error())
                return _ANSWERED
            raise

    def handle_message(self, message):
        if message is not _ANSWERED:
            super().handle_message(message)

    # Documents live in tilelsp.state, edited by documents.apply_edits; pygls' workspace copy is not kept
    # (it splits lines at U+2028 and form feed, and raises KeyError for a change to an unknown document).

    @lsp_method(types.TEXT_DOCUMENT_DID_OPEN)
    def lsp_text_document__did_open(self, params):
        """didOpen: our handler only."""
        yield self.fm.features[types.TEXT_DOCUMENT_DID_OPEN], (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params):
        """didChange: our handler only."""
        yield self.fm.features[types.TEXT_DOCUMENT_DID_CHANGE], (params,), None

    @lsp_method(types.TEXT_DOCUMENT_DID_CLOSE)
    def lsp_text_document__did_close(self, params):
        """didClose: our handler only."""
        yield self.fm.features[types.TEXT_DOCUMENT_DID_CLOSE], (params,), None


class TileLanguageServer(LanguageServer):
    """The server object: pygls plumbing plus our state, settings and worker."""

    def __init__(self) -> None:
        super().__init__("tilelsp", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
                         protocol_cls=_Protocol)
        self.state = State()
        self.settings = Settings()
        self.pull_mode = False
        self._worker = None
        self._tokens = itertools.count(1)
        self._loop, self._loop_thread = None, None
        self._tasks: set[asyncio.Task] = set()
        self.configured = False  # settings read from the client (workspace/configuration) at least once

    def start_io(self, stdin=None, stdout=None) -> None:
        """Serve on stdio with tilelsp's message loop, which resynchronises after a framing error."""
        self._stop_event = threading.Event()
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        stream = stdin or sys.stdin.buffer
        read = getattr(stream, "read1", stream.read)

        def read_some():
            return asyncio.get_running_loop().run_in_executor(self.thread_pool, read, framing.CHUNK)

        def log_line(message: str) -> None:
            self.log(message, types.MessageType.Error)

        ok = True
        try:
            ok = _run_bounded(framing.serve(self._stop_event, read_some, self.protocol, log_line,
                                            self._report_server_error), settle=self.state.checker.wait_stopped)
        except BrokenPipeError:
            log.error("tilelsp: the connection to the client is lost; shutting down")
        except (KeyboardInterrupt, SystemExit):
            pass
        if not ok:  # the message stream is unreadable; the reading thread may block forever: leave with an error
            self.close_worker()
            os._exit(1)
        self.shutdown()

    def background(self, coro) -> asyncio.Task:
        """Run a coroutine as a task kept alive until it ends; its failure is logged, never lost."""
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)

        def done(t: asyncio.Task) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                self.report_server_error(t.exception(), None)

        task.add_done_callback(done)
        return task

    @property
    def encoding(self) -> str:
        """The negotiated position encoding ('utf-16' unless the client offered and preferred another)."""
        try:
            return pos.encoding_name(self.workspace.position_encoding)
        except Exception:  # before initialize
            return pos.UTF16

    @property
    def worker(self):
        """The lowering worker process manager (started on first use)."""
        if self._worker is None:
            from .worker import Worker

            self._worker = Worker(timeout=self.settings.workerTimeoutSec, log=self.log)
        self._worker.timeout = self.settings.workerTimeoutSec
        return self._worker

    def close_worker(self) -> None:
        """Stop the worker process, if one was started."""
        if self._worker is not None:
            self._worker.close()

    def warm_worker(self) -> None:
        """Start the worker and import tvm there in the background, ahead of the first save or showIR."""
        if self._worker is not None and self._worker.proc is not None:
            return
        worker = self.worker

        def warm():
            try:
                worker.request("warm")
            except Exception as exc:  # noqa: BLE001 - reported; the next request retries
                if not worker.closed:  # stopped by shutdown: nothing went wrong
                    self.log(f"tilelsp: warming the worker failed: {exc}")

        threading.Thread(target=warm, daemon=True).start()

    def log(self, message: str, level=types.MessageType.Warning) -> None:
        """window/logMessage from any thread."""
        params = types.LogMessageParams(type=level, message=message)
        log.warning(message)
        if self._loop is not None and threading.get_ident() != self._loop_thread:
            try:
                self._loop.call_soon_threadsafe(self.window_log_message, params)
            except RuntimeError:  # the loop closed (the client said exit): there is no one left to tell
                pass
        else:
            self.window_log_message(params)

    def markup(self, text: str, capability: str) -> types.MarkupContent:
        """Markdown when the client lists it for `capability` (a dotted capability path), else plain text."""
        from pygls.capabilities import get_capability

        formats = get_capability(self.client_capabilities, capability, None) or []
        kind = types.MarkupKind.Markdown if types.MarkupKind.Markdown in formats else types.MarkupKind.PlainText
        return types.MarkupContent(kind=kind, value=text)

    def report_server_error(self, error: Exception, source) -> None:
        """Errors outside a request (bad JSON, a failing notification handler) go to the log, not a popup."""
        self.log(f"tilelsp: {type(error).__name__}: {error}", types.MessageType.Error)

    def doc(self, uri: str) -> DocState | None:
        """An open document, or a file on disk read on demand (None when neither)."""
        doc = self.state.get(uri)
        if doc is None:
            from pygls.uris import to_fs_path

            path = to_fs_path(uri)
            try:
                with open(path, encoding="utf-8") as fh:
                    doc = DocState(uri, 0, fh.read())
            except (OSError, TypeError, UnicodeDecodeError, ValueError):
                return None
        return doc

    async def result(self, doc: DocState):
        """The (cached) check result of a document, computed off the event loop."""
        return await self.state.analysis(doc, self.settings.targets)

    async def lsp_diagnostics(self, doc: DocState) -> list[types.Diagnostic]:
        """Fast + lowering + verify diagnostics of a document, merged, as LSP objects."""
        result = await self.result(doc)
        enc, src = self.encoding, result.source
        out = [to_lsp(d, src, doc.uri, enc, FAST) for d in result.diagnostics]
        out += [to_lsp(d, src, doc.uri, enc, LOWER) for d in drop_suppressed(src, doc.lower_diags)]
        out += [to_lsp(d, src, doc.uri, enc, VERIFY) for d in drop_suppressed(src, doc.verify_diags)]
        return out

    async def publish(self, doc: DocState, refresh: bool = False) -> None:
        """Push the merged diagnostics of a document (tagged with its version; dropped when a newer version
        arrived meanwhile); pull clients get a refresh request when results arrived that they cannot know
        about (`refresh`)."""
        if self.state.get(doc.uri) is not doc:
            return
        if self.pull_mode:
            if refresh:
                self._refresh_pull()
            return
        version = doc.version
        diagnostics = await self.lsp_diagnostics(doc)
        if self.state.get(doc.uri) is doc and doc.version == version:
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=doc.uri, diagnostics=diagnostics, version=version))

    def _refresh_pull(self) -> None:
        caps = self.client_capabilities.workspace
        if caps and caps.diagnostics and caps.diagnostics.refresh_support:
            self.workspace_diagnostic_refresh(None)

    async def range_of(self, doc: DocState):
        """A Span -> LSP Range converter for a document."""
        source, enc = (await self.result(doc)).source, self.encoding
        return lambda span: _range_json(pos.span_to_range(span, source, enc))


def _range_json(rng: types.Range) -> dict:
    return {"start": {"line": rng.start.line, "character": rng.start.character},
            "end": {"line": rng.end.line, "character": rng.end.character}}


_UNFINISHED: list = []  # tasks that could not finish: kept until the process ends (collecting one logs an error)


def _run_bounded(coro, cancel_wait_s: float = 2.0, settle=None):
    """asyncio.run, except that tasks still pending at the end get `cancel_wait_s` to finish after their cancel:
    a task that cannot finish (a subprocess cancelled while it was being created waits forever for its
    transport) must not keep the server from exiting; then `settle()` (a coroutine function) runs before the loop
    closes."""
    loop = asyncio.new_event_loop()
    try:
        asyncio.set_event_loop(loop)
        return loop.run_until_complete(coro)
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            loop.run_until_complete(asyncio.wait(pending, timeout=cancel_wait_s))
        _UNFINISHED.extend(t for t in pending if not t.done())
        if settle is not None:  # e.g. the exits of children stopped by the cancellations, seen while the loop runs
            loop.run_until_complete(settle())
        loop.run_until_complete(loop.shutdown_asyncgens())
        asyncio.set_event_loop(None)
        loop.close()
