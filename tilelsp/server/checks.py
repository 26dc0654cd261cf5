"""The fast check, off the server's event loop: each check runs in a child process (check_child.py) with a
deadline, so a slow or pathological document never stops the server answering the others.

A check past its deadline is stopped by killing its child; so is one superseded by a newer version of its
document once it ran for KILL_AFTER_S (a younger one finishes and its child is reused). Warm spare children
are kept ready.
"""
from __future__ import annotations

import asyncio
import os
import pickle
import shlex
import sys

from tilelang_core.check import CheckResult
from tilelang_core.diagnostics import Diagnostic, Severity
from tilelang_core.source import SourceFile, Span

from tilelsp.features.check import MAX_CHECK_CHARS, run_check

from .check_child import HEADER

DEADLINE_S = float(os.environ.get("TILELSP_CHECK_DEADLINE_S", "5"))  # per check of one document version
MAX_CHILDREN = 4  # checks running at once; more wait for a free child
SPARES = 2  # idle children kept warm
KILL_AFTER_S = 0.5  # a cancelled check running longer is killed; a younger one finishes and its child is reused
CHILD_MEM_MB = int(os.environ.get("TILELSP_CHECK_MEM_MB", "2048"))


def stopped(text: str, path: str, targets, why: str) -> CheckResult:
    """The result of a check that could not finish: one `internal-error` at the top of the file."""
    source = SourceFile(text, path)
    diag = Diagnostic("internal-error", Severity.ERROR,
                      f"tilelsp could not check this file: {why} (please report this with the file)",
                      Span(1, 0, 1, len(source.line_text(1))))
    return CheckResult(source, [], [diag], None, tuple(targets))


class CheckPool:
    """Child processes that run checks; `check` is awaited on the event loop and never blocks it."""

    def __init__(self, deadline_s: float = DEADLINE_S, log=None) -> None:
        override = os.environ.get("TILELSP_CHECK_CMD")  # a stand-in child for tests
        self.argv = shlex.split(override) if override else [sys.executable, "-m", "tilelsp.server.check_child"]
        self.deadline_s, self.log = deadline_s, log or (lambda msg: None)
        self.idle: list = []
        self._spawning: set[asyncio.Task] = set()
        self._draining: set[asyncio.Task] = set()  # cancelled young checks left to finish
        self._slots: asyncio.Semaphore | None = None
        self._freed: asyncio.Event | None = None  # set when a child becomes idle
        self.stopped = 0  # children killed at a deadline or for a newer version
        self.closed = False
        self._killed: list = []  # children told to stop whose exit the loop has not seen yet (`wait_stopped`)

    async def _spawn(self):
        from .worker import limit_memory

        # shielded: a create_subprocess_exec cancelled midway can wait forever for its transport (and with it the
        # server's exit); a child started for nothing sees its stdin close and exits
        proc = await asyncio.shield(asyncio.ensure_future(asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, start_new_session=True)))
        limit_memory(proc, CHILD_MEM_MB)
        try:
            await proc.stdout.readexactly(HEADER.size)  # the child is warm
        except BaseException:
            self._stop(proc)
            raise
        return proc

    def warm(self) -> None:
        """Start spare children in the background, one at a time, until SPARES are idle or starting (children
        starting together would share the CPU, and the first document waits for the first of them)."""
        if not self._spawning and len(self.idle) < SPARES:
            task = asyncio.ensure_future(self._spawn())
            self._spawning.add(task)
            task.add_done_callback(self._spawned)

    def _spawned(self, task: asyncio.Task) -> None:
        self._spawning.discard(task)
        if not task.cancelled() and task.exception() is None:
            if self.closed:
                self._stop(task.result())
            else:
                self._idle(task.result())
                self.warm()  # the next spare

    async def _take(self):
        """An idle child, else whichever comes first: a busy child given back or a new one started (a failed
        start raises)."""
        if self._freed is None:
            self._freed = asyncio.Event()
        while True:
            if self.closed:
                raise OSError("the server is shutting down")
            while self.idle:
                proc = self.idle.pop()
                if proc.returncode is None:
                    # top the spares up later, not now: a quick check gives its child back meanwhile, and a
                    # starting child would compete with this check for the CPU
                    asyncio.get_running_loop().call_later(KILL_AFTER_S, self.warm)
                    return proc
            if not self._spawning:
                self.warm()
            self._freed.clear()
            freed = asyncio.ensure_future(self._freed.wait())
            done, _ = await asyncio.wait({freed, *self._spawning}, return_when=asyncio.FIRST_COMPLETED)
            freed.cancel()
            failed = [t.exception() for t in done if t is not freed and not t.cancelled() and t.exception()]
            if failed:
                raise failed[0]

    def _idle(self, proc) -> None:
        self.idle.append(proc)
        if self._freed is not None:
            self._freed.set()

    async def check(self, text: str, path: str, targets) -> CheckResult:
        """The check result of one text, computed in a child within the deadline (else an internal-error)."""
        if len(text) > MAX_CHECK_CHARS:
            return run_check(text, path, targets)  # only the size cap's note: not worth a round trip
        if self._slots is None:
            self._slots = asyncio.Semaphore(MAX_CHILDREN)
        async with self._slots:
            try:
                proc = await self._take()
            except (OSError, asyncio.IncompleteReadError) as exc:
                if not self.closed:  # stopped by shutdown: nothing went wrong
                    self.log(f"tilelsp: a check process could not start ({type(exc).__name__}: {exc})")
                return stopped(text, path, targets, "a check process could not start")
            loop = asyncio.get_running_loop()
            began, reading = loop.time(), None
            try:
                payload = pickle.dumps((text, path, tuple(targets)))
                proc.stdin.write(HEADER.pack(len(payload)) + payload)
                await proc.stdin.drain()
                reading = asyncio.ensure_future(_read_result(proc.stdout))
                result = await asyncio.wait_for(asyncio.shield(reading), self.deadline_s)
            except asyncio.TimeoutError:
                self._kill(proc, reading)
                self.log(f"tilelsp: checking {path} took over {self.deadline_s:g} s; the check was stopped")
                return stopped(text, path, targets, f"the check did not finish within {self.deadline_s:g} s")
            except asyncio.CancelledError:
                if reading is not None and loop.time() - began < KILL_AFTER_S:
                    self._finish_later(proc, reading, self.deadline_s - (loop.time() - began))
                else:
                    self._kill(proc, reading)
                raise
            except (OSError, EOFError, asyncio.IncompleteReadError, pickle.UnpicklingError) as exc:
                self._kill(proc, reading)
                self.log(f"tilelsp: the check process died on {path} ({type(exc).__name__}); it will be replaced")
                return stopped(text, path, targets, "the check process died (out of memory or a crash)")
            self._release(proc)
            return result

    def _release(self, proc) -> None:
        """Keep a child that finished a check as a spare (or stop it when enough are idle)."""
        if len(self.idle) < SPARES + 1:
            self._idle(proc)
        else:
            self._stop(proc)

    def _finish_later(self, proc, reading: asyncio.Future, left_s: float) -> None:
        """Let a cancelled check's child finish (its answer is dropped) and reuse it; kill it at the deadline."""
        async def drain():
            try:
                await asyncio.wait_for(reading, max(left_s, 0.01))
                self._release(proc)
            except (asyncio.TimeoutError, asyncio.CancelledError, OSError, EOFError, asyncio.IncompleteReadError,
                    pickle.UnpicklingError):
                self._kill(proc)

        task = asyncio.ensure_future(drain())
        self._draining.add(task)
        task.add_done_callback(self._draining.discard)

    def _kill(self, proc, reading: asyncio.Future | None = None) -> None:
        if reading is not None:
            reading.cancel()
        self.stopped += 1
        self._stop(proc)

    def _stop(self, proc) -> None:
        """Kill a child and remember it until its exit is seen."""
        self._killed = [p for p in self._killed if p.returncode is None]
        if proc.returncode is None:
            try:
                proc.kill()
            except ProcessLookupError:
                return
            self._killed.append(proc)

    def close(self) -> None:
        """Stop every child (those still starting are stopped once started)."""
        self.closed = True
        for task in list(self._draining):
            task.cancel()
        for proc in self.idle:
            self._stop(proc)
        self.idle.clear()

    async def wait_stopped(self, timeout_s: float = 1.0) -> None:
        """Wait (at most `timeout_s`) until the loop has seen every killed child exit: one that exits after its
        loop closed makes asyncio's child watcher write a warning to stderr."""
        waits = [asyncio.ensure_future(p.wait()) for p in self._killed if p.returncode is None]
        if waits:
            await asyncio.wait(waits, timeout=timeout_s)


async def _read_result(stream) -> CheckResult:
    (size,) = HEADER.unpack(await stream.readexactly(HEADER.size))
    return pickle.loads(await stream.readexactly(size))
