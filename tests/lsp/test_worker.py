"""Worker processes: timeouts kill a hung worker, crashes are reported, memory is limited, and the next
request gets a fresh worker; one-shot commands (verify) time out and cancel; the real worker answers."""
from __future__ import annotations

import sys
import threading
from pathlib import Path

import pytest

from tilelsp.features import verify
from tilelsp.server.worker import Cancelled, Worker, WorkerError, run_process

FAKE = [sys.executable, str(Path(__file__).with_name("misbehaving_worker.py"))]


def test_hung_worker_is_killed_and_replaced():
    logs = []
    w = Worker(FAKE, timeout=0.5, log=logs.append)
    try:
        first = w.request("echo")["pid"]
        with pytest.raises(WorkerError, match="timed out"):
            w.request("hang")
        assert w.request("echo")["pid"] != first
        assert any("timed out" in m for m in logs) and any("restarted" in m for m in logs)
    finally:
        w.close()


def test_crashed_worker_is_reported_and_replaced():
    logs = []
    w = Worker(FAKE, timeout=10, log=logs.append)
    try:
        with pytest.raises(WorkerError, match="crashed.*exit code 3.*simulated crash"):
            w.request("crash")
        assert w.request("echo")["op"] == "echo"
        assert w.restarts >= 1
    finally:
        w.close()


def test_memory_limit_applies():
    w = Worker(FAKE, timeout=10, mem_mb=512)
    try:
        with pytest.raises(WorkerError, match="out of memory"):
            w.request("hog")
        assert w.request("echo")["op"] == "echo"
    finally:
        w.close()


def test_cancel_stops_the_request():
    w = Worker(FAKE, timeout=30)
    cancel = threading.Event()
    threading.Timer(0.3, cancel.set).start()
    try:
        with pytest.raises(Cancelled):
            w.request("hang", cancel=cancel)
        assert w.request("echo")["op"] == "echo"
    finally:
        w.close()


def test_real_worker_answers_and_reports_unknown_ops():
    w = Worker(timeout=30)
    try:
        assert w.request("ping") == "pong"
        with pytest.raises(WorkerError, match="unknown worker op"):
            w.request("no-such-op")
        assert w.request("ping") == "pong"
    finally:
        w.close()


LOOP = "def factory():\n    while True:\n        pass\nfactory()\n"
RAISE = "def factory():\n    raise ValueError('bad block size')\nfactory()\n"
HOG = "x = bytearray(16 << 30)\n"


@pytest.mark.parametrize("code,expect", [(LOOP, "timed out"), (RAISE, "bad block size"), (HOG, "MemoryError")])
def test_one_shot_process_survives_hostile_code(code, expect):
    rc, out, err = run_process([sys.executable, "-c", code], timeout=2, mem_mb=1024)
    result = verify.parse_result(rc, out, err, "factory")
    assert result["passed"] is False and expect in (result["message"] + err)


def test_one_shot_cancel():
    cancel = threading.Event()
    threading.Timer(0.2, cancel.set).start()
    assert run_process([sys.executable, "-c", LOOP], timeout=30, cancel=cancel)[0] == -2


def test_verify_result_parsing_and_diagnostics():
    out = '{"kernel": "main", "passed": true, "max_abs_err": 0.001, "max_rel_err": 0.002, "time_ms": 0.5, "device": "cpu"}\n'
    res = verify.parse_result(0, out, "", "main")
    assert res["passed"] and res["maxAbsErr"] == 0.001 and res["device"] == "cpu"
    from tilelang_core.source import Span

    [d] = verify.result_diagnostics(res, "main", Span(3, 8, 3, 12))
    assert d.code == "verify-passed" and "0.001" in d.message
    bad = verify.parse_result(1, '{"passed": false, "max_abs_err": 3.5, "device": "cpu"}', "", "main")
    assert verify.result_diagnostics(bad, "main", Span(3, 8, 3, 12))[0].code == "verify-mismatch"
    assert verify.verify_argv("/x.py", "main", "cpu", True)[-1] == "--bench"
