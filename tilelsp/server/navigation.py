"""Feature handlers: hover, inlay hints, code lenses, completion, signature help, semantic tokens, code actions.

Each converts positions (features/positions.py), awaits the document's check result (computed off the event loop)
and calls one pure function in tilelsp.features, imported on first use (`initialize` answers sooner). A document
over the size cap gets empty answers.
"""
from __future__ import annotations

import asyncio

from typing import TYPE_CHECKING

from lsprotocol import types

from tilelsp.features import positions as pos
from tilelsp.features import semantic
from tilelsp.features.check import MAX_CHECK_CHARS
from tilelsp.features.diagnostics import to_lsp

if TYPE_CHECKING:
    from .language_server import TileLanguageServer
    from .state import DocState

COMPLETION_DOCS = "text_document.completion.completion_item.documentation_format"
_KINDS = {"function": types.CompletionItemKind.Function, "dtype": types.CompletionItemKind.TypeParameter,
          "type": types.CompletionItemKind.Class, "decorator": types.CompletionItemKind.Function,
          "context": types.CompletionItemKind.Function, "iterator": types.CompletionItemKind.Function}


def preload() -> None:
    """Import the feature modules and libcst (quick fixes) in a thread once the session is up, so neither
    `initialize` nor the first hover or code action waits for them.

    Not a daemon thread: the interpreter joins it before it finalizes. A daemon stopped mid-import at exit keeps
    that module's import lock, and the main thread's next import during shutdown waited for it forever."""
    import importlib
    import threading

    modules = ("tilelsp.features.hover", "tilelsp.features.inlay", "tilelsp.features.codelens",
               "tilelsp.features.completion", "tilelsp.features.actions", "tilelsp.features.ir_view",
               "tilelsp.features.verify", "libcst", "libcst.metadata")
    threading.Thread(target=lambda: [importlib.import_module(m) for m in modules], daemon=False).start()


def _open(ls: TileLanguageServer, uri: str) -> DocState | None:
    """The document, or None when it is unknown or over the size cap (no feature looks at it)."""
    doc = ls.doc(uri)
    return doc if doc is not None and len(doc.text) <= MAX_CHECK_CHARS else None


async def _at(ls: TileLanguageServer, uri: str, position: types.Position):
    doc = _open(ls, uri)
    if doc is None:
        return None, None, None
    result = await ls.result(doc)
    if not 0 <= position.line < pos.line_count(result.source) or position.character < 0:
        return None, None, None  # outside the document: nothing to say
    line, col = pos.position_to_point(position, result.source, ls.encoding)
    return doc, result, (line, col)


async def on_hover(ls: TileLanguageServer, params: types.HoverParams):
    """Hover on a buffer, a kernel or a builtin."""
    from tilelsp.features import hover

    doc, result, point = await _at(ls, params.text_document.uri, params.position)
    if doc is None:
        return None
    found = hover.hover(result, *point, lowered=doc.lower_entries, uri=doc.uri, images=_shows_images(ls))
    if not found:
        return None
    text, span = found
    if doc.lower_started is not None and doc.lower_version != doc.version:
        running = asyncio.get_running_loop().time() - doc.lower_started
        text += f"\n\n*lowering this version ({running:.1f} s so far): its CUDA shows here when it is done*"
    return types.Hover(contents=ls.markup(text, "text_document.hover.content_format"),
                       range=pos.span_to_range(span, result.source, ls.encoding))


def _shows_images(ls: TileLanguageServer) -> bool:
    """VS Code (and its forks) render Markdown images in hovers; other clients would show a data: URI as text."""
    name = getattr(ls, "client_name", "").lower()
    return "code" in name or "vscodium" in name


async def on_inlay(ls: TileLanguageServer, params: types.InlayHintParams):
    """Inlay hints after allocations in the requested range."""
    from tilelsp.features import inlay

    doc = _open(ls, params.text_document.uri)
    if doc is None:
        return []
    result, enc = await ls.result(doc), ls.encoding
    hints = inlay.inlay_hints(result, params.range.start.line + 1, params.range.end.line + 1)
    return [types.InlayHint(position=types.Position(
                h.line - 1, pos.col_to_units(pos.text_of_line(result.source, h.line), h.col, enc)),
            label=h.label, kind=types.InlayHintKind.Type, tooltip=h.tooltip, padding_left=True) for h in hints]


async def on_code_lens(ls: TileLanguageServer, params: types.CodeLensParams):
    """Verify / Show IR / Show CUDA / Benchmark on each kernel."""
    from tilelsp.features import codelens

    doc = _open(ls, params.text_document.uri)
    if doc is None:
        return []
    result = await ls.result(doc)
    return [types.CodeLens(range=pos.span_to_range(l.span, result.source, ls.encoding),
                           command=types.Command(title=l.title, command=l.command, arguments=list(l.arguments)))
            for l in codelens.code_lenses(result, doc.uri)]


async def on_completion(ls: TileLanguageServer, params: types.CompletionParams):
    """`T.` completion from the registry."""
    from tilelsp.features import completion

    doc, result, point = await _at(ls, params.text_document.uri, params.position)
    if doc is None:
        return None
    items = completion.completions(result.source.text, pos.text_of_line(result.source, point[0]), point[1])
    return types.CompletionList(is_incomplete=False, items=[
        types.CompletionItem(label=i.label, kind=_KINDS.get(i.kind, types.CompletionItemKind.Constant),
                             detail=i.detail, documentation=ls.markup(i.doc, COMPLETION_DOCS) if i.doc else None)
        for i in items])


async def on_signature_help(ls: TileLanguageServer, params: types.SignatureHelpParams):
    """Signature help inside `T.*(`."""
    from tilelsp.features import completion

    doc, result, point = await _at(ls, params.text_document.uri, params.position)
    if doc is None:
        return None
    sig = completion.signature_help(result.source.text, result.source.offset(*point))
    if sig is None:
        return None
    info = types.SignatureInformation(
        label=sig.label,
        documentation=ls.markup(sig.doc, "text_document.signature_help.signature_information.documentation_format")
        if sig.doc else None,
        parameters=[types.ParameterInformation(label=name, documentation=doc_ or None) for name, doc_ in sig.params])
    return types.SignatureHelp(signatures=[info], active_signature=0, active_parameter=sig.active)


async def on_semantic_tokens(ls: TileLanguageServer, params: types.SemanticTokensParams):
    """Builtins, dtypes and buffers (with their scope) as semantic tokens."""
    doc = _open(ls, params.text_document.uri)
    if doc is None:
        return types.SemanticTokens(data=[])
    result, enc = await ls.result(doc), ls.encoding
    tokens = semantic.semantic_tokens(result)
    return types.SemanticTokens(data=semantic.encode(tokens, pos.lsp_lines(result.source.text),
                                                     lambda text, col: pos.col_to_units(text, col, enc)))


async def on_code_action(ls: TileLanguageServer, params: types.CodeActionParams):
    """Quick fixes for our diagnostics in the range, and Verify/Benchmark for the kernel there."""
    from tilelsp.features import actions

    doc = _open(ls, params.text_document.uri)
    if doc is None:
        return []
    result, enc = await ls.result(doc), ls.encoding
    span = pos.range_to_span(params.range, result.source, enc)
    kernel = actions.kernel_at(result, span.line)
    found = actions.code_actions(result, span, result.diagnostics + doc.lower_diags, doc.uri, kernel)
    return [_lsp_action(a, doc, result, enc) for a in found]


def _lsp_action(a, doc: DocState, result, enc: str) -> types.CodeAction:
    from tilelsp.features.actions import QUICKFIX

    edit = None
    if a.edits:
        edits = [types.TextEdit(pos.span_to_range(e.span, result.source, enc), e.new_text) for e in a.edits]
        edit = types.WorkspaceEdit(changes={doc.uri: edits})
    diags = [to_lsp(a.diagnostic, result.source, doc.uri, enc)] if a.diagnostic else None
    command = types.Command(title=a.title, command=a.command, arguments=list(a.arguments)) if a.command else None
    kind = types.CodeActionKind.QuickFix if a.kind == QUICKFIX else types.CodeActionKind.Source
    return types.CodeAction(title=a.title, kind=kind, edit=edit, command=command, diagnostics=diags,
                            is_preferred=a.preferred or None)
