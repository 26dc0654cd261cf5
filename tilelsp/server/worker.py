"""Worker processes: everything that imports tvm or may run user code happens here, never in the server.

`Worker` keeps one long-lived `python -m tilelsp.server.worker` process (warm tvm, a small lowering cache)
and talks JSON lines to it with a timeout; a worker that hangs is killed, one that crashes is
reported, and either is replaced on the next request. `run_process` runs a one-shot command (verify)
with a timeout, a memory limit and cancellation. Running this module is the worker's main loop.
"""
from __future__ import annotations

import collections
import json
import os
import selectors
import shlex
import signal
import subprocess
import sys
import threading
import time

DEFAULT_MEM_MB = int(os.environ.get("TILELSP_WORKER_MEM_MB", "4096"))


class WorkerError(Exception):
    """The worker failed: it timed out, crashed, ran out of memory, or the request was cancelled."""


class Cancelled(WorkerError):
    """The request was cancelled by the client; the worker was stopped."""


def limit_memory(proc: subprocess.Popen, mem_mb: int, hard: bool = True) -> None:
    """Cap a started process's address space (soft only when `hard` is False, so a child that sets its own
    limit, like `tilelsp verify`'s runner, may still do so). Applied with prlimit after the start: a
    preexec_fn is unsafe in the server, whose thread pool is running."""
    import resource

    if mem_mb <= 0 or not hasattr(resource, "prlimit"):
        return
    limit = mem_mb * 1024 * 1024
    try:
        _, current_hard = resource.prlimit(proc.pid, resource.RLIMIT_AS)
        resource.prlimit(proc.pid, resource.RLIMIT_AS, (limit, limit if hard else current_hard))
    except (OSError, ValueError):
        pass  # the process is already gone, or the platform refuses: the timeout still applies


def _kill(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        pass


class Worker:
    """One persistent worker process, restarted on demand; `request` is thread-safe and blocking."""

    def __init__(self, argv=None, timeout: float = 60.0, mem_mb: int = DEFAULT_MEM_MB, log=None):
        override = os.environ.get("TILELSP_WORKER_CMD")  # e.g. a debugging or stand-in worker
        self.argv = argv or (shlex.split(override) if override else [sys.executable, "-m", "tilelsp.server.worker"])
        self.timeout, self.mem_mb, self.log = timeout, mem_mb, log or (lambda msg: None)
        self.proc: subprocess.Popen | None = None
        self.restarts = 0
        self._lock = threading.Lock()
        self._stderr: collections.deque[str] = collections.deque(maxlen=40)
        self._next_id = 0
        self._lost = False  # the previous process hung, crashed or was cancelled
        self.closed = False  # the server is shutting down: no new process

    def _start(self) -> subprocess.Popen:
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        proc = subprocess.Popen(self.argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True, env=env)
        limit_memory(proc, self.mem_mb)
        threading.Thread(target=self._drain, args=(proc,), daemon=True).start()
        return proc

    def _drain(self, proc) -> None:
        for raw in iter(proc.stderr.readline, b""):
            self._stderr.append(raw.decode("utf-8", "replace").rstrip())

    def _ensure(self) -> subprocess.Popen:
        if self.closed:
            raise WorkerError("the server is shutting down")
        if self.proc is not None and self.proc.poll() is not None:
            self._lost = True  # died between requests
        if self.proc is None or self.proc.poll() is not None:
            if self._lost:
                self.restarts += 1
                self.log(f"tilelsp worker restarted (restart #{self.restarts})")
            self.proc, self._lost = self._start(), False
        return self.proc

    def request(self, op: str, timeout: float | None = None, cancel: threading.Event | None = None, **payload):
        """Send one request and wait for its answer; raises WorkerError on timeout, crash or cancellation."""
        with self._lock:
            proc = self._ensure()
            self._next_id += 1
            msg = json.dumps({"id": self._next_id, "op": op, **payload}) + "\n"
            try:
                proc.stdin.write(msg.encode("utf-8"))
                proc.stdin.flush()
            except (BrokenPipeError, OSError):
                raise self._crashed(proc, op) from None
            line = self._read_line(proc, op, timeout or self.timeout, cancel)
        reply = json.loads(line)
        if not reply.get("ok"):
            raise WorkerError(reply.get("error", "worker error"))
        return reply.get("result")

    def _read_line(self, proc, op, timeout, cancel) -> bytes:
        deadline = time.monotonic() + timeout
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while True:
                if cancel is not None and cancel.is_set():
                    self._stop(proc)
                    raise Cancelled(f"{op} cancelled; the worker was stopped")
                left = deadline - time.monotonic()
                if left <= 0:
                    self._stop(proc)
                    msg = f"tilelsp worker: {op} timed out after {timeout:g} s; the worker was killed and will be replaced"
                    self.log(msg)
                    raise WorkerError(msg)
                if sel.select(min(left, 0.1)):
                    line = proc.stdout.readline()
                    if not line:
                        raise self._crashed(proc, op)
                    return line

    def _crashed(self, proc, op) -> WorkerError:
        try:
            code = proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            _kill(proc)
            code = proc.returncode
        time.sleep(0.05)  # let the stderr drain thread catch the last lines
        tail = " | ".join(list(self._stderr)[-3:])
        why = "it ran out of memory" if "MemoryError" in tail else f"exit code {code}"
        msg = f"tilelsp worker crashed during {op} ({why}); it will be replaced. {tail}".strip()
        self.log(msg)
        self.proc, self._lost = None, True
        return WorkerError(msg)

    def _stop(self, proc) -> None:
        _kill(proc)
        self.proc, self._lost = None, True

    def close(self) -> None:
        """Stop the worker process (if any); later requests fail instead of starting another."""
        self.closed = True
        if self.proc is not None:
            _kill(self.proc)
            self.proc = None


def run_process(argv, timeout: float, cancel: threading.Event | None = None, mem_mb: int = 8192,
                cwd: str | None = None) -> tuple[int, str, str]:
    """Run a command with a timeout, memory limit and cancellation: (exit code, stdout, stderr).

    Exit code -1 means it timed out, -2 that it was cancelled; the process group is killed in both cases.
    """
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
                            start_new_session=True)
    limit_memory(proc, mem_mb, hard=False)
    deadline = time.monotonic() + timeout
    while proc.poll() is None:
        if cancel is not None and cancel.is_set():
            _kill(proc)
            return -2, "", "cancelled"
        if time.monotonic() > deadline:
            _kill(proc)
            return -1, "", f"timed out after {timeout:g} s"
        try:
            out, err = proc.communicate(timeout=0.1)
            return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
        except subprocess.TimeoutExpired:
            continue
    out, err = proc.communicate()
    return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def main() -> int:
    """The worker loop: one JSON request per stdin line, one JSON reply per line on the real stdout."""
    from tilelsp.features import ir_view as lowering

    out = os.fdopen(os.dup(1), "w", buffering=1, encoding="utf-8")
    os.dup2(2, 1)  # stray prints (tvm, user code) go to stderr, never into the protocol
    for raw in sys.stdin:
        try:
            req = json.loads(raw)
            reply = {"id": req.get("id"), "ok": True, "result": lowering.handle(req)}
        except MemoryError:
            reply = {"ok": False, "error": "the worker ran out of memory"}
        except Exception as exc:  # noqa: BLE001 - reported to the server, never fatal here
            reply = {"ok": False, "error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(reply) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
