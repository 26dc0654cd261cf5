"""Open documents, their versions, the per-(uri, version) analysis cache, and debounced re-checks.

The fast check runs here, in the server process: it is pure Python (`tilelang_core.check_source`)
and never imports tvm or executes user code. Lowering and verify results are stored per document
with the version they were computed for, so stale ones can be dropped.
"""
from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from pygls.uris import to_fs_path

from tilelang_core.check import CheckResult
from tilelang_core.source import SourceFile

from .features.diagnostics import internal_error, too_large


@dataclass
class DocState:
    """One open document: its text and version, and what was computed for which version."""

    uri: str
    version: int
    text: str
    result: CheckResult | None = None
    result_key: tuple | None = None
    lower_version: int | None = None  # the version the stored lowering results were computed for
    lower_requested: int | None = None  # the version of the newest lowering asked for (older answers are stale)
    lower_entries: list = field(default_factory=list)
    lower_diags: list = field(default_factory=list)
    verify_diags: list = field(default_factory=list)
    pending: asyncio.Task | None = None

    @property
    def path(self) -> str:
        """The file-system path of the document (the URI itself when it is not a file URI)."""
        return to_fs_path(self.uri) or self.uri


def run_check(text: str, path: str, targets) -> CheckResult:
    """`check_source` with the size cap and a guard: bad input yields diagnostics, never an exception."""
    source = SourceFile(text, path)
    big = too_large(source)
    if big is not None:
        return CheckResult(source, [], [big], None, tuple(targets))
    try:
        from tilelang_core.check import check_source

        return check_source(text, path, tuple(targets))
    except RecursionError as exc:
        return CheckResult(source, [], [internal_error(exc, "check this file (nesting too deep)")], None, tuple(targets))
    except Exception as exc:  # noqa: BLE001 - the server must survive any checker bug
        return CheckResult(source, [], [internal_error(exc, "check this file")], None, tuple(targets))


class State:
    """All open documents of one server."""

    def __init__(self) -> None:
        self.docs: dict[str, DocState] = {}

    def open(self, uri: str, version: int, text: str) -> DocState:
        """Start tracking a document."""
        doc = self.docs[uri] = DocState(uri, version if version is not None else 0, text)
        return doc

    def update(self, uri: str, version: int, text: str) -> DocState:
        """New text for a document (opened implicitly when unknown)."""
        doc = self.docs.get(uri)
        if doc is None:
            return self.open(uri, version, text)
        doc.version = version if version is not None else doc.version + 1
        doc.text = text
        return doc

    def close(self, uri: str) -> None:
        """Forget a document and cancel its pending check."""
        doc = self.docs.pop(uri, None)
        if doc is not None and doc.pending is not None:
            doc.pending.cancel()

    def get(self, uri: str) -> DocState | None:
        """The document for a URI, or None when it is not open."""
        return self.docs.get(uri)

    def analysis(self, doc: DocState, targets) -> CheckResult:
        """The check result for the document's current version and targets (cached)."""
        key = (doc.version, len(doc.text), hash(doc.text), tuple(targets))
        if doc.result is None or doc.result_key != key:
            doc.result = run_check(doc.text, doc.path, targets)
            doc.result_key = key
        return doc.result

    def schedule(self, doc: DocState, delay_s: float, job) -> asyncio.Task:
        """Run `job()` (a coroutine function) after `delay_s`, replacing any pending job for the document."""
        if doc.pending is not None and not doc.pending.done():
            doc.pending.cancel()

        async def later():
            if delay_s > 0:
                await asyncio.sleep(delay_s)
            await job()

        doc.pending = asyncio.ensure_future(later())
        return doc.pending

    def accept_lowering(self, doc: DocState, version: int, entries: list, diags: list) -> bool:
        """Store lowering results for `version` unless a newer lowering was requested since (then drop them)."""
        if self.docs.get(doc.uri) is not doc or doc.lower_requested != version:
            return False
        doc.lower_version, doc.lower_entries, doc.lower_diags = version, entries, diags
        return True
