"""The server exits promptly when the client says exit while the feature modules are still being imported.

The preload ran in a daemon thread: stopped mid-import at interpreter exit, it kept that module's import lock and
the main thread's next import during shutdown waited forever (a hung `tilelsp serve` seen in CI)."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _frame(msg: dict) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


@pytest.mark.parametrize("attempt", range(4))
def test_exit_right_after_initialized_does_not_hang(attempt, tmp_path):
    messages = [{"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": tmp_path.as_uri(),
                                                              "capabilities": {}}},
                {"method": "initialized", "params": {}},
                {"id": 2, "method": "shutdown"},
                {"method": "exit"}]
    proc = subprocess.run([sys.executable, "-m", "tilelsp", "serve"], input=b"".join(map(_frame, messages)),
                          capture_output=True, timeout=60)
    assert b'"id": 2' in proc.stdout.replace(b'"id":2', b'"id": 2')  # shutdown was answered
    assert proc.returncode == 0, proc.stderr[-2000:]
