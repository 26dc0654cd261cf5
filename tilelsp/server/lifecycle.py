"""Server lifecycle handlers: initialize (push or pull diagnostics), settings from the client, shutdown."""
from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING

from lsprotocol import types

from .commands import plain_params
from .settings import parse_settings

if TYPE_CHECKING:
    from .language_server import TileLanguageServer


def on_initialize(ls: TileLanguageServer, params: types.InitializeParams) -> None:
    """Pick push or pull diagnostics; read settings passed as initializationOptions; warm a check child."""
    ls._loop, ls._loop_thread = asyncio.get_running_loop(), threading.get_ident()
    ls.client_name = params.client_info.name if params.client_info else ""  # hover images: VS Code only
    td, ws = params.capabilities.text_document, params.capabilities.workspace
    # pull only when the client can also be told to re-pull (results from save/verify arrive later)
    ls.pull_mode = bool(td and td.diagnostic and ws and ws.diagnostics and ws.diagnostics.refresh_support)
    opts = plain_params(params.initialization_options)
    if isinstance(opts, dict):
        apply_settings(ls, opts.get("tilelsp", opts))
    ls.state.checker.log = ls.log
    ls.state.checker.warm()


def apply_settings(ls: TileLanguageServer, raw) -> None:
    """Replace the settings (invalid values -> defaults, each reported with window/logMessage)."""
    ls.settings, warnings = parse_settings(raw)
    for w in warnings:
        ls.log(w)


async def republish_all(ls: TileLanguageServer) -> None:
    """Publish every open document again (settings changed)."""
    for doc in list(ls.state.docs.values()):
        await ls.publish(doc, refresh=True)


async def refresh_settings(ls: TileLanguageServer) -> None:
    """Pull section `tilelsp` through workspace/configuration (when the client supports it) and re-check."""
    ws = ls.client_capabilities.workspace
    if ws and ws.configuration:
        try:
            items = await ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section="tilelsp")]))
            apply_settings(ls, plain_params(items[0]) if items else None)
        except Exception as exc:  # noqa: BLE001 - a client that fails this keeps the defaults
            ls.log(f"tilelsp: could not read settings ({exc}); using defaults")
    ls.configured = True
    await republish_all(ls)
    if ls.settings.lowerOnSave:
        for doc in list(ls.state.docs.values()):
            if (await ls.result(doc)).kernels:
                ls.warm_worker()
                break


async def on_initialized(ls: TileLanguageServer, params) -> None:
    """Read the settings once the client is ready; import the feature modules meanwhile."""
    from .navigation import preload

    preload()
    await refresh_settings(ls)


async def on_change_configuration(ls: TileLanguageServer, params: types.DidChangeConfigurationParams) -> None:
    """Settings changed: take them from the notification when present, else pull them again."""
    raw = plain_params(params.settings)
    if isinstance(raw, dict) and isinstance(raw.get("tilelsp"), dict):
        apply_settings(ls, raw["tilelsp"])
        await republish_all(ls)
    else:
        await refresh_settings(ls)


def on_shutdown(ls: TileLanguageServer, params) -> None:
    """Stop the workers, and cancel requests still running (over a copy: pygls' own loop over its live
    dict fails when a cancellation callback changes it)."""
    ls.worker.close()  # made (closed) when none ran: a lowering asked for later must not start one
    ls.state.checker.close()
    current = ls.protocol.msg_id
    if current is None:  # not inside the shutdown request's context: leave it to pygls
        return
    for msg_id, future in list(ls.protocol._request_futures.items()):
        if msg_id != current and not future.done():
            future.cancel()
