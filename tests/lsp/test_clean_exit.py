"""A clean server exit (shutdown, then exit) over stdio writes nothing to stderr: no 'Event loop is closed'
tracebacks, no 'Task was destroyed' or child-watcher warnings, no broken pipes of the children it stopped —
whether it exits idle, while check children are starting, or while a check or the lowering worker is busy."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from tests.conftest import ROOT


def _frame(msg: dict) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _session(tmp_path, open_s: float | None, save_s: float | None) -> subprocess.CompletedProcess:
    path = tmp_path / "gemm.py"
    path.write_text((ROOT / "examples" / "gemm.py").read_text())
    uri = path.as_uri()
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen([sys.executable, "-m", "tilelsp", "serve"], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path, env=env)

    def send(msg: dict, wait_s: float = 0.0) -> None:
        proc.stdin.write(_frame(msg))
        proc.stdin.flush()
        time.sleep(wait_s)

    send({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": tmp_path.as_uri(),
                                                       "capabilities": {}}})
    send({"method": "initialized", "params": {}})
    if open_s is not None:
        send({"method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "python", "version": 1, "text": path.read_text()}}}, open_s)
    if save_s is not None:
        send({"method": "textDocument/didSave", "params": {"textDocument": {"uri": uri}}}, save_s)
    send({"id": 2, "method": "shutdown"})
    send({"method": "exit"})
    out, err = proc.communicate(timeout=120)
    return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)


@pytest.mark.parametrize("open_s, save_s", [(None, None), (0.05, None), (2.0, 0.5)],
                         ids=["idle", "children-starting", "worker-starting"])
def test_a_clean_exit_writes_nothing_to_stderr(tmp_path, open_s, save_s):
    done = _session(tmp_path, open_s, save_s)
    assert b'"id": 2' in done.stdout.replace(b'"id":2', b'"id": 2')  # shutdown was answered
    assert done.returncode == 0
    assert done.stderr == b"", done.stderr.decode(errors="replace")[-3000:]
