"""Open documents, their versions, the per-(uri, version) analysis cache, and debounced re-checks.

The fast check is pure Python (`tilelang_core.check_source`, never tvm, never user code) and runs in a
check child process (`checks.CheckPool`) so that the event loop stays free; a newer version of a document
cancels the check of the older one. Lowering and verify results are stored per document with the version
they were computed for, so stale ones can be dropped; lowerings are also kept by content, so text seen before
(an undo) needs no new lowering.
"""
from __future__ import annotations

import asyncio
import collections
from dataclasses import dataclass, field

from pygls.uris import to_fs_path

from tilelang_core.check import CheckResult

from .checks import CheckPool

LOWERED_KEPT = 8  # lowerings kept by content per server


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
    lower_started: float | None = None  # loop time the newest lowering started (None: none running)
    verify_diags: list = field(default_factory=list)
    pending: asyncio.Task | None = None
    checking: tuple | None = None  # (key, task) of the check running for this document

    @property
    def path(self) -> str:
        """The file-system path of the document (the URI itself when it is not a file URI)."""
        return to_fs_path(self.uri) or self.uri


class State:
    """All open documents of one server."""

    def __init__(self, checker: CheckPool | None = None) -> None:
        self.docs: dict[str, DocState] = {}
        self.checker = checker or CheckPool()
        self.lowered: collections.OrderedDict = collections.OrderedDict()  # (text, targets) -> (entries, diags)

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
        if doc is not None and doc.checking is not None:
            doc.checking[1].cancel()

    def get(self, uri: str) -> DocState | None:
        """The document for a URI, or None when it is not open."""
        return self.docs.get(uri)

    async def analysis(self, doc: DocState, targets) -> CheckResult:
        """The check result for the document's current version and targets (cached; computed off the loop).

        A check superseded by a newer version is cancelled; its waiters then wait for the newer one."""
        while True:
            key = (doc.version, len(doc.text), hash(doc.text), tuple(targets))
            if doc.result is not None and doc.result_key == key:
                return doc.result
            if doc.checking is None or doc.checking[0] != key or doc.checking[1].cancelled():
                if doc.checking is not None:
                    doc.checking[1].cancel()  # an older version's check: no one needs it now
                doc.checking = (key, asyncio.ensure_future(self._check(doc, key, doc.text, targets)))
            try:
                return await asyncio.shield(doc.checking[1])
            except asyncio.CancelledError:
                if asyncio.current_task().cancelling():
                    raise  # this waiter itself was cancelled (e.g. $/cancelRequest)

    async def _check(self, doc: DocState, key: tuple, text: str, targets) -> CheckResult:
        result = await self.checker.check(text, doc.path, targets)
        doc.result, doc.result_key = result, key
        if doc.checking is not None and doc.checking[0] == key:
            doc.checking = None
        return result

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
        doc.lower_started = None
        return True

    def remember_lowering(self, key: tuple, entries: list, diags: list) -> None:
        """Keep a lowering by its content (text, targets), the LOWERED_KEPT most recent: an undo finds it again."""
        self.lowered[key] = (entries, diags)
        self.lowered.move_to_end(key)
        while len(self.lowered) > LOWERED_KEPT:
            self.lowered.popitem(last=False)
