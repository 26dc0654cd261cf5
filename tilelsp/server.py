"""The tilelsp language server: handler registration only; each handler converts positions, calls one
pure feature function (tilelsp.features.*), and converts back.

Fast diagnostics (source "tilelsp") come from the pure-Python check in this process; lowering on save
("tilelsp-lower"), IR views and verify ("tilelsp-verify") run in worker processes.
"""
from __future__ import annotations

import asyncio
import itertools
import logging
import threading

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from tilelang_core import __version__
from tilelang_core.suppress import drop_suppressed

from . import positions as pos
from .features import actions, codelens, completion, hover, inlay, semantic
from .features.commands import (_plain, cmd_benchmark, cmd_show_ir, cmd_verify, on_kernels, on_show_ir,
                                on_status)
from .features.diagnostics import FAST, LOWER, VERIFY, to_lsp
from .settings import Settings, parse_settings
from .state import DocState, State

log = logging.getLogger("tilelsp")
_COMMANDS = ("tilelsp.server.verify", "tilelsp.server.benchmark", "tilelsp.server.showIR")
_COMPLETION_DOCS = "text_document.completion.completion_item.documentation_format"


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
        self.configured = False  # settings read from the client (workspace/configuration) at least once

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

    def warm_worker(self) -> None:
        """Start the worker and import tvm there in the background, ahead of the first save or showIR."""
        if self._worker is not None and self._worker.proc is not None:
            return
        worker = self.worker

        def warm():
            try:
                worker.request("warm")
            except Exception as exc:  # noqa: BLE001 - reported; the next request retries
                self.log(f"tilelsp: warming the worker failed: {exc}")

        threading.Thread(target=warm, daemon=True).start()

    def log(self, message: str, level=types.MessageType.Warning) -> None:
        """window/logMessage from any thread."""
        params = types.LogMessageParams(type=level, message=message)
        log.warning(message)
        if self._loop is not None and threading.get_ident() != self._loop_thread:
            self._loop.call_soon_threadsafe(self.window_log_message, params)
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

    def result(self, doc: DocState):
        """The (cached) check result of a document."""
        return self.state.analysis(doc, self.settings.targets)

    def lsp_diagnostics(self, doc: DocState) -> list[types.Diagnostic]:
        """Fast + lowering + verify diagnostics of a document, merged, as LSP objects."""
        result = self.result(doc)
        enc, src = self.encoding, result.source
        out = [to_lsp(d, src, doc.uri, enc, FAST) for d in result.diagnostics]
        out += [to_lsp(d, src, doc.uri, enc, LOWER) for d in drop_suppressed(src, doc.lower_diags)]
        out += [to_lsp(d, src, doc.uri, enc, VERIFY) for d in drop_suppressed(src, doc.verify_diags)]
        return out

    def publish(self, doc: DocState, refresh: bool = False) -> None:
        """Push the merged diagnostics of a document (tagged with its version); pull clients get a refresh
        request when results arrived that they cannot know about (`refresh`)."""
        if self.state.get(doc.uri) is not doc:
            return
        if self.pull_mode:
            if refresh:
                self._refresh_pull()
            return
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=doc.uri, diagnostics=self.lsp_diagnostics(doc), version=doc.version))

    def _refresh_pull(self) -> None:
        caps = self.client_capabilities.workspace
        if caps and caps.diagnostics and caps.diagnostics.refresh_support:
            self.workspace_diagnostic_refresh(None)

    def range_of(self, doc: DocState):
        """A Span -> LSP Range converter for a document."""
        source, enc = self.result(doc).source, self.encoding
        return lambda span: _range_json(pos.span_to_range(span, source, enc))


def _range_json(rng: types.Range) -> dict:
    return {"start": {"line": rng.start.line, "character": rng.start.character},
            "end": {"line": rng.end.line, "character": rng.end.character}}


def create_server() -> TileLanguageServer:
    """A new server with every handler registered."""
    ls = TileLanguageServer()
    _register(ls)
    return ls


def run_serve(args=None) -> int:
    """`tilelsp serve [--tcp HOST:PORT]`: serve on stdio (default) or TCP until the client exits."""
    ls = create_server()
    tcp = getattr(args, "tcp", None)
    try:
        if tcp:
            host, _, port = tcp.rpartition(":")
            import sys

            print(f"tilelsp: listening on {host or '127.0.0.1'}:{port}", file=sys.stderr, flush=True)
            ls.start_tcp(host or "127.0.0.1", int(port))
        else:
            ls.start_io()
    finally:
        if ls._worker is not None:
            ls._worker.close()
    return 0


# --- lifecycle and settings ----------------------------------------------------------------------

def on_initialize(ls: TileLanguageServer, params: types.InitializeParams) -> None:
    """Pick push or pull diagnostics; read settings passed as initializationOptions."""
    ls._loop, ls._loop_thread = asyncio.get_running_loop(), threading.get_ident()
    td, ws = params.capabilities.text_document, params.capabilities.workspace
    # pull only when the client can also be told to re-pull (results from save/verify arrive later)
    ls.pull_mode = bool(td and td.diagnostic and ws and ws.diagnostics and ws.diagnostics.refresh_support)
    opts = _plain(params.initialization_options)
    if isinstance(opts, dict):
        apply_settings(ls, opts.get("tilelsp", opts))


def apply_settings(ls: TileLanguageServer, raw) -> None:
    """Replace the settings (invalid values -> defaults, each reported with window/logMessage)."""
    ls.settings, warnings = parse_settings(raw)
    for w in warnings:
        ls.log(w)


async def refresh_settings(ls: TileLanguageServer) -> None:
    """Pull section `tilelsp` through workspace/configuration (when the client supports it) and re-check."""
    ws = ls.client_capabilities.workspace
    if ws and ws.configuration:
        try:
            items = await ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="tilelsp")]))
            apply_settings(ls, _plain(items[0]) if items else None)
        except Exception as exc:  # noqa: BLE001 - a client that fails this keeps the defaults
            ls.log(f"tilelsp: could not read settings ({exc}); using defaults")
    ls.configured = True
    for doc in list(ls.state.docs.values()):
        ls.publish(doc, refresh=True)
    if ls.settings.lowerOnSave and any(ls.result(d).kernels for d in ls.state.docs.values()):
        ls.warm_worker()


async def on_initialized(ls: TileLanguageServer, params) -> None:
    """Read the settings once the client is ready."""
    await refresh_settings(ls)


async def on_change_configuration(ls: TileLanguageServer, params: types.DidChangeConfigurationParams) -> None:
    """Settings changed: take them from the notification when present, else pull them again."""
    raw = _plain(params.settings)
    if isinstance(raw, dict) and isinstance(raw.get("tilelsp"), dict):
        apply_settings(ls, raw["tilelsp"])
        for doc in list(ls.state.docs.values()):
            ls.publish(doc, refresh=True)
    else:
        await refresh_settings(ls)


def on_shutdown(ls: TileLanguageServer, params) -> None:
    """Stop the worker, and cancel requests still running (over a copy: pygls' own loop over its live
    dict fails when a cancellation callback changes it)."""
    if ls._worker is not None:
        ls._worker.close()
    current = ls.protocol.msg_id
    if current is None:  # not inside the shutdown request's context: leave it to pygls
        return
    for msg_id, future in list(ls.protocol._request_futures.items()):
        if msg_id != current and not future.done():
            future.cancel()


# --- documents and diagnostics -------------------------------------------------------------------

def on_open(ls: TileLanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    """Check a newly opened document right away."""
    td = params.text_document
    doc = ls.state.open(td.uri, td.version, td.text)
    ls.publish(doc)
    if ls.configured and ls.settings.lowerOnSave and ls.result(doc).kernels:
        ls.warm_worker()


def on_change(ls: TileLanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    """Apply the edit (pygls keeps the text), then re-check after `debounceMs` if `checkOnChange`."""
    uri = params.text_document.uri
    text = ls.workspace.get_text_document(uri).source
    doc = ls.state.update(uri, params.text_document.version, text)
    if not ls.settings.checkOnChange:
        return
    version = doc.version

    async def job():
        if doc.version == version:  # a newer edit supersedes this one
            ls.publish(doc)

    if ls.settings.debounceMs <= 0:
        ls.publish(doc)
    else:
        ls.state.schedule(doc, ls.settings.debounceMs / 1000, job)


async def on_save(ls: TileLanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    """Re-check now; then lower every kernel in the worker and publish its findings as "tilelsp-lower"."""
    doc = ls.state.get(params.text_document.uri)
    if doc is None:
        return
    if params.text is not None:
        ls.state.update(doc.uri, doc.version, params.text)
    ls.publish(doc)
    if ls.settings.lowerOnSave and ls.result(doc).kernels:
        await lower_document(ls, doc)


async def lower_document(ls: TileLanguageServer, doc: DocState) -> None:
    """Lower the saved version in the worker; drop the answer if a newer lowering was asked for meanwhile."""
    from .features.ir_view import diag_from_dict
    from .worker import WorkerError

    version = doc.lower_requested = doc.version
    request = dict(text=doc.text, path=doc.path, targets=list(ls.settings.targets))
    loop = asyncio.get_running_loop()
    try:
        reply = await loop.run_in_executor(None, lambda: ls.worker.request("lower", **request))
    except WorkerError as exc:
        ls.log(f"tilelsp: lowering {doc.path} failed: {exc}")
        return
    diags = [diag_from_dict(d) for d in reply.get("diagnostics", [])]
    if ls.state.accept_lowering(doc, version, reply.get("entries", []), diags):
        ls.publish(doc, refresh=True)


def on_close(ls: TileLanguageServer, params: types.DidCloseTextDocumentParams) -> None:
    """Forget the document and clear its diagnostics."""
    uri = params.text_document.uri
    ls.state.close(uri)
    if not ls.pull_mode:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def on_pull_diagnostics(ls: TileLanguageServer, params: types.DocumentDiagnosticParams):
    """textDocument/diagnostic: the same merged set the push model would publish."""
    doc = ls.doc(params.text_document.uri)
    items = ls.lsp_diagnostics(doc) if doc is not None else []
    return types.RelatedFullDocumentDiagnosticReport(items=items, result_id=f"{doc.version if doc else 0}")


# --- navigation features -------------------------------------------------------------------------

def _at(ls: TileLanguageServer, uri: str, position: types.Position):
    doc = ls.doc(uri)
    if doc is None:
        return None, None, None
    result = ls.result(doc)
    if not 0 <= position.line < len(result.source.lines) or position.character < 0:
        return None, None, None  # outside the document: nothing to say
    line, col = pos.position_to_point(position, result.source, ls.encoding)
    return doc, result, (line, col)


def on_hover(ls: TileLanguageServer, params: types.HoverParams):
    """Hover on a buffer, a kernel or a builtin."""
    doc, result, point = _at(ls, params.text_document.uri, params.position)
    if doc is None:
        return None
    found = hover.hover(result, *point, lowered=doc.lower_entries, uri=doc.uri)
    if not found:
        return None
    text, span = found
    return types.Hover(contents=ls.markup(text, "text_document.hover.content_format"),
                       range=pos.span_to_range(span, result.source, ls.encoding))


def on_inlay(ls: TileLanguageServer, params: types.InlayHintParams):
    """Inlay hints after allocations in the requested range."""
    doc = ls.doc(params.text_document.uri)
    if doc is None:
        return []
    result, enc = ls.result(doc), ls.encoding
    hints = inlay.inlay_hints(result, params.range.start.line + 1, params.range.end.line + 1)
    return [types.InlayHint(position=types.Position(h.line - 1, pos.col_to_units(result.source.line_text(h.line), h.col, enc)),
                            label=h.label, kind=types.InlayHintKind.Type, tooltip=h.tooltip, padding_left=True)
            for h in hints]


def on_code_lens(ls: TileLanguageServer, params: types.CodeLensParams):
    """Verify / Show IR / Show CUDA / Benchmark on each kernel."""
    doc = ls.doc(params.text_document.uri)
    if doc is None:
        return []
    result = ls.result(doc)
    return [types.CodeLens(range=pos.span_to_range(l.span, result.source, ls.encoding),
                           command=types.Command(title=l.title, command=l.command, arguments=list(l.arguments)))
            for l in codelens.code_lenses(result, doc.uri)]


def on_completion(ls: TileLanguageServer, params: types.CompletionParams):
    """`T.` completion from the registry."""
    doc, result, point = _at(ls, params.text_document.uri, params.position)
    if doc is None:
        return None
    items = completion.completions(doc.text, result.source.line_text(point[0]), point[1])
    kinds = {"function": types.CompletionItemKind.Function, "dtype": types.CompletionItemKind.TypeParameter,
             "type": types.CompletionItemKind.Class, "decorator": types.CompletionItemKind.Function,
             "context": types.CompletionItemKind.Function, "iterator": types.CompletionItemKind.Function}
    return types.CompletionList(is_incomplete=False, items=[
        types.CompletionItem(label=i.label, kind=kinds.get(i.kind, types.CompletionItemKind.Constant), detail=i.detail,
                             documentation=ls.markup(i.doc, _COMPLETION_DOCS) if i.doc else None)
        for i in items])


def on_signature_help(ls: TileLanguageServer, params: types.SignatureHelpParams):
    """Signature help inside `T.*(`."""
    doc, result, point = _at(ls, params.text_document.uri, params.position)
    if doc is None:
        return None
    sig = completion.signature_help(doc.text, result.source.offset(*point))
    if sig is None:
        return None
    info = types.SignatureInformation(
        label=sig.label,
        documentation=ls.markup(sig.doc, "text_document.signature_help.signature_information.documentation_format")
        if sig.doc else None,
        parameters=[types.ParameterInformation(label=name, documentation=doc_ or None) for name, doc_ in sig.params])
    return types.SignatureHelp(signatures=[info], active_signature=0, active_parameter=sig.active)


def on_semantic_tokens(ls: TileLanguageServer, params: types.SemanticTokensParams):
    """Builtins, dtypes and buffers (with their scope) as semantic tokens."""
    doc = ls.doc(params.text_document.uri)
    if doc is None:
        return types.SemanticTokens(data=[])
    result, enc = ls.result(doc), ls.encoding
    tokens = semantic.semantic_tokens(result)
    return types.SemanticTokens(data=semantic.encode(tokens, result.source.lines,
                                                     lambda text, col: pos.col_to_units(text, col, enc)))


def on_code_action(ls: TileLanguageServer, params: types.CodeActionParams):
    """Quick fixes for our diagnostics in the range, and Verify/Benchmark for the kernel there."""
    doc = ls.doc(params.text_document.uri)
    if doc is None:
        return []
    result, enc = ls.result(doc), ls.encoding
    span = pos.range_to_span(params.range, result.source, enc)
    kernel = actions.kernel_at(result, span.line)
    found = actions.code_actions(result, span, result.diagnostics + doc.lower_diags, doc.uri, kernel)
    return [_lsp_action(a, doc, result, enc) for a in found]


def _lsp_action(a: actions.Action, doc: DocState, result, enc: str) -> types.CodeAction:
    edit = None
    if a.edits:
        edits = [types.TextEdit(pos.span_to_range(e.span, result.source, enc), e.new_text) for e in a.edits]
        edit = types.WorkspaceEdit(changes={doc.uri: edits})
    diags = [to_lsp(a.diagnostic, result.source, doc.uri, enc)] if a.diagnostic else None
    command = types.Command(title=a.title, command=a.command, arguments=list(a.arguments)) if a.command else None
    kind = types.CodeActionKind.QuickFix if a.kind == actions.QUICKFIX else types.CodeActionKind.Source
    return types.CodeAction(title=a.title, kind=kind, edit=edit, command=command, diagnostics=diags,
                            is_preferred=a.preferred or None)


# --- registration --------------------------------------------------------------------------------

def _register(ls: TileLanguageServer) -> None:
    table = [
        (types.INITIALIZE, on_initialize, None), (types.INITIALIZED, on_initialized, None),
        (types.SHUTDOWN, on_shutdown, None),
        (types.WORKSPACE_DID_CHANGE_CONFIGURATION, on_change_configuration, None),
        (types.TEXT_DOCUMENT_DID_OPEN, on_open, None), (types.TEXT_DOCUMENT_DID_CHANGE, on_change, None),
        (types.TEXT_DOCUMENT_DID_SAVE, on_save, types.SaveOptions(include_text=False)),
        (types.TEXT_DOCUMENT_DID_CLOSE, on_close, None),
        (types.TEXT_DOCUMENT_DIAGNOSTIC, on_pull_diagnostics,
         types.DiagnosticOptions(identifier="tilelsp", inter_file_dependencies=False, workspace_diagnostics=False)),
        (types.TEXT_DOCUMENT_HOVER, on_hover, None), (types.TEXT_DOCUMENT_INLAY_HINT, on_inlay, None),
        (types.TEXT_DOCUMENT_CODE_LENS, on_code_lens, None),
        (types.TEXT_DOCUMENT_COMPLETION, on_completion, types.CompletionOptions(trigger_characters=["."])),
        (types.TEXT_DOCUMENT_SIGNATURE_HELP, on_signature_help,
         types.SignatureHelpOptions(trigger_characters=["(", ","], retrigger_characters=[","])),
        (types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, on_semantic_tokens, types.SemanticTokensLegend(
            token_types=list(semantic.TOKEN_TYPES), token_modifiers=list(semantic.TOKEN_MODIFIERS))),
        (types.TEXT_DOCUMENT_CODE_ACTION, on_code_action,
         types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.Source])),
        ("tilelsp/kernels", on_kernels, None), ("tilelsp/showIR", on_show_ir, None),
        ("tilelsp/status", on_status, None),
    ]
    for method, fn, options in table:
        ls.feature(method, options)(fn) if options is not None else ls.feature(method)(fn)
    for name, fn in zip(_COMMANDS, (cmd_verify, cmd_benchmark, cmd_show_ir)):
        ls.command(name)(fn)
