"""Custom requests and long-running commands of the server: `tilelsp/kernels`, `tilelsp/showIR`,
`tilelsp/layout`, `tilelsp/status`, `tilelsp/documentText`, and the `tilelsp.server.*` commands (showIR in the lowering worker; verify/benchmark
/autotune in a subprocess with progress and cancellation, on the Ray cluster of `tilelsp.ray.address` when set). Adapters only: the logic lives in ir_view and verify.
"""
from __future__ import annotations

import asyncio
import sys
import threading
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams

from tilelang_core import __version__

from tilelsp.features.check import MAX_CHECK_CHARS

if TYPE_CHECKING:
    from .language_server import TileLanguageServer
    from .state import DocState


def plain_params(obj):
    """Custom-request params (namedtuples from pygls, or dicts) as plain dicts/lists."""
    if hasattr(obj, "_asdict"):
        return {k: plain_params(v) for k, v in obj._asdict().items()}
    if isinstance(obj, dict):
        return {k: plain_params(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [plain_params(v) for v in obj]
    return obj


async def on_kernels(ls: TileLanguageServer, params):
    """`tilelsp/kernels`: the kernels of a document with ranges, instances and stage names."""
    from tilelsp.features import ir_view

    p = plain_params(params) or {}
    uri = (p.get("textDocument") or {}).get("uri") or p.get("uri")
    doc = ls.doc(uri) if uri else None
    if doc is None:
        raise JsonRpcInvalidParams(f"unknown document {uri!r}: open it first")
    return {"kernels": ir_view.kernels_payload(await ls.result(doc), ls.settings.targets[0], await ls.range_of(doc))}


def on_status(ls: TileLanguageServer, params):
    """`tilelsp/status`: what the server process holds (documents, settings, worker) and whether tvm/torch
    were ever imported here (they must not be: the keystroke path is pure Python)."""
    import sys

    w = ls._worker
    return {"version": __version__, "encoding": ls.encoding, "pullDiagnostics": ls.pull_mode,
            "documents": sorted(ls.state.docs), "targets": list(ls.settings.targets),
            "trustWorkspace": ls.settings.trustWorkspace, "tvmLoaded": "tvm" in sys.modules,
            "torchLoaded": "torch" in sys.modules,
            "workerPid": w.proc.pid if w is not None and w.proc is not None else None,
            "workerRestarts": w.restarts if w is not None else 0, "checksStopped": ls.state.checker.stopped}


def on_document_text(ls: TileLanguageServer, params):
    """`tilelsp/documentText {uri}`: the server's copy of an open document and its version (for clients and
    tests that check the server's text against their own)."""
    p = plain_params(params) or {}
    uri = (p.get("textDocument") or {}).get("uri") or p.get("uri")
    doc = ls.state.get(uri) if isinstance(uri, str) else None
    if doc is None:
        raise JsonRpcInvalidParams(f"unknown document {uri!r}: open it first")
    return {"uri": doc.uri, "version": doc.version, "text": doc.text}


async def on_show_ir(ls: TileLanguageServer, params):
    """`tilelsp/showIR {uri, kernel, stage, target?, instance?}`: lowered text of one stage, in the worker."""
    p = plain_params(params) or {}
    return await show_ir(ls, p.get("uri"), p.get("kernel"), p.get("stage") or "cuda", p.get("target"), p.get("instance"))


async def show_ir(ls: TileLanguageServer, uri, kernel, stage, target=None, instance=None) -> dict:
    """Lower one kernel in the worker and return the stage's text and line map."""
    from .worker import WorkerError

    doc = ls.doc(uri) if isinstance(uri, str) else None
    if doc is None:
        raise JsonRpcInvalidParams(f"unknown document {uri!r}: open it first")
    if len(doc.text) > MAX_CHECK_CHARS:
        raise JsonRpcInvalidParams(f"showIR: {doc.path} has {len(doc.text):,} characters, over the "
                                   f"{MAX_CHECK_CHARS:,} tilelsp checks and lowers; split the kernels into smaller files")
    request = dict(text=doc.text, path=doc.path, targets=list(ls.settings.targets), kernel=kernel, stage=stage,
                   target=target or ls.settings.targets[0], instance=instance)
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(None, lambda: ls.worker.request("show_ir", **request))
    except WorkerError as exc:
        raise JsonRpcInvalidParams(f"showIR failed: {exc}") from None


async def on_layout(ls: TileLanguageServer, params):
    """`tilelsp/layout {uri, kernel?, buffer?, target?, instance?}`: the layout views of a kernel's fragment and
    shared buffers (SVG and text each, and the webview's HTML page), computed in the worker."""
    from .worker import WorkerError

    p = plain_params(params) or {}
    uri = (p.get("textDocument") or {}).get("uri") or p.get("uri")
    doc = ls.doc(uri) if isinstance(uri, str) else None
    if doc is None:
        raise JsonRpcInvalidParams(f"unknown document {uri!r}: open it first")
    request = dict(text=doc.text, path=doc.path, targets=list(ls.settings.targets), kernel=p.get("kernel"),
                   buffer=p.get("buffer"), target=p.get("target") or ls.settings.targets[0],
                   instance=p.get("instance"))
    loop = asyncio.get_running_loop()
    try:
        return await loop.run_in_executor(None, lambda: ls.worker.request("layout", **request))
    except WorkerError as exc:
        raise JsonRpcInvalidParams(f"layout failed: {exc}") from None


async def cmd_show_ir(ls, *args):  # no annotation: pygls resolves handler hints at call time
    """Command `tilelsp.server.showIR [uri, kernel, stage]`."""
    uri, kernel, stage = (list(args) + [None, None, "cuda"])[:3]
    return await show_ir(ls, uri, kernel, stage or "cuda")


async def cmd_verify(ls, *args):
    """Command `tilelsp.server.verify [uri, kernel]`."""
    return await run_verify(ls, args, bench=False)


async def cmd_benchmark(ls, *args):
    """Command `tilelsp.server.benchmark [uri, kernel]`."""
    return await run_verify(ls, args, bench=True)


async def cmd_sanitize(ls, *args):
    """Command `tilelsp.server.sanitize [uri, kernel]`: `tilelsp verify --sanitize` on the CPU; the findings
    become diagnostics at their lines."""
    return await run_verify(ls, args, bench=False, sanitize=True)


async def cmd_metamorphic(ls, *args):
    """Command `tilelsp.server.metamorphic [uri, kernel]`: `tilelsp verify --metamorphic` on the CPU (the kernel at
    other tile configurations, and with one row block of its inputs perturbed); the findings become diagnostics
    at their lines."""
    return await run_verify(ls, args, bench=False, metamorphic=True)


async def run_verify(ls: TileLanguageServer, args, bench: bool, sanitize: bool = False,
                     metamorphic: bool = False) -> dict:
    """Run `tilelsp verify` in a subprocess with progress and cancellation; refuse in untrusted workspaces."""
    from tilelsp.cluster.connection import configured_address
    from tilelsp.features import verify

    uri, kernel = (list(args) + [None, None])[:2]
    doc = ls.doc(uri) if isinstance(uri, str) else None
    if doc is None or not kernel:
        raise JsonRpcInvalidParams(f"verify needs [uri, kernel] of an open document, got {list(args)!r}")
    if not ls.settings.trustWorkspace:
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning, verify.UNTRUSTED))
        return {"passed": False, "maxAbsErr": None, "maxRelErr": None, "timeMs": None, "device": None,
                "message": verify.UNTRUSTED}
    what = "Benchmark" if bench else "Sanitize" if sanitize else "Metamorphic check" if metamorphic else "Verify"
    on_cpu = sanitize or metamorphic  # both are the CPU backend's
    cancel, token = threading.Event(), f"tilelsp-verify-{next(ls._tokens)}"
    progress = await _begin_progress(ls, token, f"{what} {kernel}", cancel)
    device = "cpu" if on_cpu else ls.settings.verifyDevice
    argv = verify.verify_argv(doc.path, kernel, device, bench, ls.settings.workerTimeoutSec, sanitize, metamorphic)
    address = None if on_cpu else configured_address(ls.settings)
    if address:  # tilelsp.ray.address: the kernel is built and run on the cluster (docs/ray.md)
        argv += ["--ray", address]
        _report_progress(ls, token, progress, f"on the Ray cluster {address}")
    from .worker import run_process

    # CUDA maps huge virtual ranges, so only CPU runs get an address-space cap (the runner adds its own)
    mem_mb = 8192 if device == "cpu" else 0
    loop = asyncio.get_running_loop()
    try:
        code, out, err = await loop.run_in_executor(
            None, lambda: run_process(argv, ls.settings.workerTimeoutSec + 5, cancel, mem_mb=mem_mb))
    except asyncio.CancelledError:
        cancel.set()
        raise
    finally:
        if progress:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
    res = verify.parse_result(code, out, err, kernel)
    await _publish_verify(ls, doc, kernel, res)
    level = types.MessageType.Info if res["passed"] else types.MessageType.Error
    where = f" (on the Ray cluster {address})" if address else ""
    ls.window_show_message(types.ShowMessageParams(level, f"tilelsp {what.lower()}{where}: {res['message']}"))
    out = {k: res.get(k) for k in ("passed", "maxAbsErr", "maxRelErr", "timeMs", "device", "message", "findings")
           if k != "findings" or on_cpu}
    return dict(out, ray=address) if address else out


def _report_progress(ls, token: str, progress: bool, message: str) -> None:
    if progress:
        ls.work_done_progress.report(token, types.WorkDoneProgressReport(message=message))


async def cmd_autotune(ls, *args):
    """Command `tilelsp.server.autotune [uri, kernel]`: `tilelsp autotune` in a subprocess (on the Ray cluster
    when `tilelsp.ray.address` is set) with progress and cancellation; refused in untrusted workspaces."""
    import json

    from tilelsp.cluster.connection import configured_address
    from tilelsp.features import verify

    uri, kernel = (list(args) + [None, None])[:2]
    doc = ls.doc(uri) if isinstance(uri, str) else None
    if doc is None or not kernel:
        raise JsonRpcInvalidParams(f"autotune needs [uri, kernel] of an open document, got {list(args)!r}")
    if not ls.settings.trustWorkspace:
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Warning, verify.UNTRUSTED))
        return {"best": None, "message": verify.UNTRUSTED}
    address = configured_address(ls.settings)
    argv = [sys.executable, "-m", "tilelsp", "autotune", doc.path, "--kernel", kernel, "--json",
            "--device", ls.settings.verifyDevice] + (["--ray", address] if address else [])
    cancel, token = threading.Event(), f"tilelsp-autotune-{next(ls._tokens)}"
    progress = await _begin_progress(ls, token, f"Autotune {kernel}", cancel)
    if address:
        _report_progress(ls, token, progress, f"on the Ray cluster {address}")
    from .worker import run_process

    try:
        code, out, err = await asyncio.get_running_loop().run_in_executor(
            None, lambda: run_process(argv, 10 * ls.settings.workerTimeoutSec, cancel, mem_mb=0))
    finally:
        if progress:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
    lines = [ln for ln in out.splitlines() if ln.startswith("{")]
    where = f" on the Ray cluster {address}" if address else ""
    if code != 0 or not lines:
        message = f"tilelsp autotune{where} failed: {(err.strip().splitlines() or ['exit ' + str(code)])[-1]}"
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, message))
        return {"best": None, "message": message, "ray": address}
    result = json.loads(lines[-1])
    best = result["best"]
    message = f"tilelsp autotune{where}: best {best['config']} {best['latency_ms']:.4g} ms on {result['device']}"
    ls.window_show_message(types.ShowMessageParams(types.MessageType.Info, message))
    return {"best": best, "device": result["device"], "timings": result["timings"], "message": message,
            "ray": address}


async def _begin_progress(ls: TileLanguageServer, token: str, title: str, cancel: threading.Event) -> bool:
    window = ls.client_capabilities.window
    if not (window and window.work_done_progress):
        return False
    try:
        await ls.work_done_progress.create_async(token)
    except Exception:  # noqa: BLE001 - progress is a nicety
        return False
    ls.work_done_progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=True,
                                                                   message="running in a subprocess"))
    fut = ls.work_done_progress.tokens.get(token)
    if fut is not None:
        fut.add_done_callback(lambda f: cancel.set() if f.cancelled() else None)
    return True


async def _publish_verify(ls: TileLanguageServer, doc: DocState, kernel: str, res: dict) -> None:
    from tilelsp.features import verify

    live = ls.state.get(doc.uri)
    if live is None:
        return
    result = await ls.result(live)
    span = next((k.name_span or k.span for k in result.kernels if k.name == kernel), None)
    if span is None:
        return
    live.verify_diags = [d for d in live.verify_diags if d.kernel != kernel]
    live.verify_diags += verify.result_diagnostics(res, kernel, span)
    await ls.publish(live, refresh=True)
