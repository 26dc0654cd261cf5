"""`tilelsp serve`: a language server with every handler registered (lifecycle.py, documents.py with edits applied
per the LSP spec, navigation.py, commands.py), served on stdio or TCP."""
from __future__ import annotations

import gc
import os
import sys

from lsprotocol import types

from tilelsp.features import semantic

from . import documents, lifecycle, navigation
from .commands import (cmd_autotune, cmd_benchmark, cmd_metamorphic, cmd_sanitize, cmd_show_ir, cmd_verify,
                       on_document_text, on_kernels, on_layout, on_show_ir, on_status)
from .language_server import TileLanguageServer

_COMMANDS = ("tilelsp.server.verify", "tilelsp.server.benchmark", "tilelsp.server.showIR", "tilelsp.server.sanitize",
             "tilelsp.server.autotune", "tilelsp.server.metamorphic")


def create_server() -> TileLanguageServer:
    """A new server with every handler registered."""
    ls = TileLanguageServer()
    _register(ls)
    return ls


def run_serve(args=None) -> int:
    """`tilelsp serve [--tcp HOST:PORT]`: serve on stdio (default) or TCP until the client exits."""
    gc.freeze()  # the modules just imported live as long as the server: no collection needs to walk them again
    ls = create_server()
    tcp = getattr(args, "tcp", None)
    try:
        if tcp:
            host, _, port = tcp.rpartition(":")
            print(f"tilelsp: listening on {host or '127.0.0.1'}:{port}", file=sys.stderr, flush=True)
            ls.start_tcp(host or "127.0.0.1", int(port))
        else:
            ls.start_io()
    finally:
        ls.close_worker()
    if not tcp:  # a clean stdio exit ends here: nothing is left to run, and finalising the asyncio subprocess
        for stream in (sys.stdout, sys.stderr):  # transports of stopped children after their loop closed would
            if not stream.closed:  # write 'Event loop is closed' tracebacks to stderr
                stream.flush()
        os._exit(0)
    return 0


# --- registration --------------------------------------------------------------------------------

def _register(ls: TileLanguageServer) -> None:
    table = [
        (types.INITIALIZE, lifecycle.on_initialize, None), (types.INITIALIZED, lifecycle.on_initialized, None),
        (types.SHUTDOWN, lifecycle.on_shutdown, None),
        (types.WORKSPACE_DID_CHANGE_CONFIGURATION, lifecycle.on_change_configuration, None),
        (types.TEXT_DOCUMENT_DID_OPEN, documents.on_open, None),
        (types.TEXT_DOCUMENT_DID_CHANGE, documents.on_change, None),
        (types.TEXT_DOCUMENT_DID_SAVE, documents.on_save, types.SaveOptions(include_text=False)),
        (types.TEXT_DOCUMENT_DID_CLOSE, documents.on_close, None),
        (types.TEXT_DOCUMENT_DIAGNOSTIC, documents.on_pull_diagnostics,
         types.DiagnosticOptions(identifier="tilelsp", inter_file_dependencies=False, workspace_diagnostics=False)),
        (types.TEXT_DOCUMENT_HOVER, navigation.on_hover, None),
        (types.TEXT_DOCUMENT_INLAY_HINT, navigation.on_inlay, None),
        (types.TEXT_DOCUMENT_CODE_LENS, navigation.on_code_lens, None),
        (types.TEXT_DOCUMENT_COMPLETION, navigation.on_completion, types.CompletionOptions(trigger_characters=["."])),
        (types.TEXT_DOCUMENT_SIGNATURE_HELP, navigation.on_signature_help,
         types.SignatureHelpOptions(trigger_characters=["(", ","], retrigger_characters=[","])),
        (types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, navigation.on_semantic_tokens, types.SemanticTokensLegend(
            token_types=list(semantic.TOKEN_TYPES), token_modifiers=list(semantic.TOKEN_MODIFIERS))),
        (types.TEXT_DOCUMENT_CODE_ACTION, navigation.on_code_action,
         types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.Source])),
        ("tilelsp/kernels", on_kernels, None), ("tilelsp/showIR", on_show_ir, None),
        ("tilelsp/layout", on_layout, None),
        ("tilelsp/status", on_status, None), ("tilelsp/documentText", on_document_text, None),
    ]
    for method, fn, options in table:
        ls.feature(method, options)(fn) if options is not None else ls.feature(method)(fn)
    for name, fn in zip(_COMMANDS, (cmd_verify, cmd_benchmark, cmd_show_ir, cmd_sanitize, cmd_autotune,
                                    cmd_metamorphic)):
        ls.command(name)(fn)
