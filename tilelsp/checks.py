"""The fast check, off the server's event loop: each check runs in a child process (`python -m tilelsp.checks`)
with a deadline, so a slow or pathological document never stops the server answering the others.

A check past its deadline, or one superseded by a newer version of its document, is stopped by killing its
child; a warm spare child is kept ready. Running this module is the child's loop: one pickled
(text, path, targets) request in, one pickled CheckResult out, each framed by an 8-byte length.
"""
from __future__ import annotations

import asyncio
import os
import pickle
import shlex
import struct
import sys

from tilelang_core.check import CheckResult
from tilelang_core.diagnostics import Diagnostic, Severity
from tilelang_core.source import SourceFile, Span

from .features.diagnostics import MAX_CHECK_CHARS, internal_error, too_large

DEADLINE_S = float(os.environ.get("TILELSP_CHECK_DEADLINE_S", "5"))  # per check of one document version
MAX_CHILDREN = 4  # checks running at once; more wait for a free child
SPARES = 1  # idle children kept warm
CHILD_MEM_MB = int(os.environ.get("TILELSP_CHECK_MEM_MB", "2048"))
_HEADER = struct.Struct("<Q")


def run_check(text: str, path: str, targets) -> CheckResult:
    """`check_source` with the size cap and a guard: bad input yields diagnostics, never an exception."""
    source = SourceFile(text, path)
    big = too_large(source)
    if big is not None:
        return CheckResult(source, [], [big], None, tuple(targets))
    try:
        import warnings

        from tilelang_core.check import check_source

        with warnings.catch_warnings():  # ast.parse warns about the user's code: not ours to print
            warnings.simplefilter("ignore")
            return check_source(text, path, tuple(targets))
    except RecursionError as exc:
        return CheckResult(source, [], [internal_error(exc, "check this file (nesting too deep)")], None, tuple(targets))
    except MemoryError as exc:
        return CheckResult(source, [], [internal_error(exc, "check this file (out of memory)")], None, tuple(targets))
    except Exception as exc:  # noqa: BLE001 - the server must survive any checker bug
        return CheckResult(source, [], [internal_error(exc, "check this file")], None, tuple(targets))


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
        self.argv = shlex.split(override) if override else [sys.executable, "-m", "tilelsp.checks"]
        self.deadline_s, self.log = deadline_s, log or (lambda msg: None)
        self.idle: list = []
        self._spawning: set[asyncio.Task] = set()
        self._slots: asyncio.Semaphore | None = None
        self.stopped = 0  # children killed at a deadline or for a newer version

    async def _spawn(self):
        from .worker import _limit_memory

        proc = await asyncio.create_subprocess_exec(
            *self.argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, start_new_session=True)
        _limit_memory(proc, CHILD_MEM_MB)
        return proc

    def warm(self) -> None:
        """Start spare children in the background until SPARES are idle or starting."""
        while len(self.idle) + len(self._spawning) < SPARES:
            task = asyncio.ensure_future(self._spawn())
            self._spawning.add(task)
            task.add_done_callback(self._spawned)

    def _spawned(self, task: asyncio.Task) -> None:
        self._spawning.discard(task)
        if not task.cancelled() and task.exception() is None:
            self.idle.append(task.result())

    async def _take(self):
        while self.idle:
            proc = self.idle.pop()
            if proc.returncode is None:
                self.warm()
                return proc
        proc = await self._spawn()
        self.warm()
        return proc

    async def check(self, text: str, path: str, targets) -> CheckResult:
        """The check result of one text, computed in a child within the deadline (else an internal-error)."""
        if len(text) > MAX_CHECK_CHARS:
            return run_check(text, path, targets)  # only the size cap's note: not worth a round trip
        if self._slots is None:
            self._slots = asyncio.Semaphore(MAX_CHILDREN)
        async with self._slots:
            proc = await self._take()
            try:
                payload = pickle.dumps((text, path, tuple(targets)))
                proc.stdin.write(_HEADER.pack(len(payload)) + payload)
                await proc.stdin.drain()
                result = await asyncio.wait_for(_read_result(proc.stdout), self.deadline_s)
            except asyncio.TimeoutError:
                self._kill(proc)
                self.log(f"tilelsp: checking {path} took over {self.deadline_s:g} s; the check was stopped")
                return stopped(text, path, targets, f"the check did not finish within {self.deadline_s:g} s")
            except asyncio.CancelledError:
                self._kill(proc)
                raise
            except (OSError, EOFError, asyncio.IncompleteReadError, pickle.UnpicklingError) as exc:
                self._kill(proc)
                self.log(f"tilelsp: the check process died on {path} ({type(exc).__name__}); it will be replaced")
                return stopped(text, path, targets, "the check process died (out of memory or a crash)")
            self.idle.append(proc)
            return result

    def _kill(self, proc) -> None:
        self.stopped += 1
        try:
            proc.kill()
        except ProcessLookupError:
            pass

    def close(self) -> None:
        """Stop every child."""
        for task in list(self._spawning):
            task.cancel()
        for proc in self.idle:
            if proc.returncode is None:
                proc.kill()
        self.idle.clear()


async def _read_result(stream) -> CheckResult:
    (size,) = _HEADER.unpack(await stream.readexactly(_HEADER.size))
    return pickle.loads(await stream.readexactly(size))


def main() -> int:
    """The child's loop: read a request, check, write the pickled result (stray prints go to stderr)."""
    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)
    inp = sys.stdin.buffer
    run_check("", "<warm-up>", ("sm_90a",))  # import the check path before the first request
    while True:
        head = inp.read(_HEADER.size)
        if len(head) < _HEADER.size:
            return 0
        text, path, targets = pickle.loads(inp.read(_HEADER.unpack(head)[0]))
        result = run_check(text, path, targets)
        try:
            data = pickle.dumps(result)
        except Exception as exc:  # noqa: BLE001 - a result that cannot travel is reported, not lost
            data = pickle.dumps(CheckResult(result.source, [], [internal_error(exc, "send this file's check result")],
                                            None, tuple(targets)))
        out.write(_HEADER.pack(len(data)) + data)
        out.flush()


if __name__ == "__main__":
    sys.exit(main())
