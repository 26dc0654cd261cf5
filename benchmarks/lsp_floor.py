"""Editor latency against the pygls floor, measured side by side (runs interleaved, so load hits both alike):

- initialize: process start → the initialize response, for a bare pygls 2 server (no features) and `tilelsp serve`,
  in wall time and in the CPU time the server process used until then (less sensitive to other load);
- first diagnostics: didOpen of a file with an error → its publishDiagnostics (tilelsp);
- first code action: codeAction at that error → the response with the quick fix (tilelsp).

Targets (issue 13): tilelsp's initialize ≤ 1.1 × the bare server's; first diagnostics and first code action ≤ 300 ms
on a quiet machine. The load average is recorded with the figures: on a busy machine they are upper bounds.
Both servers run with bytecode caching on (as an installed package has it; the cache goes to a temporary
PYTHONPYCACHEPREFIX, filled by one unrecorded warm-up round), even where PYTHONDONTWRITEBYTECODE is set.

Usage: python benchmarks/lsp_floor.py [--rounds 9]   (writes benchmarks/results/lsp_floor.json)
"""
from __future__ import annotations

import argparse
import json
import os
import selectors
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BARE = "from pygls.lsp.server import LanguageServer\nLanguageServer('floor', '0').start_io()\n"
EXAMPLE = ROOT / "examples" / "errors" / "shared_memory_exceeded.py"


class Session:
    """A server process spoken to over stdio with JSON-RPC (blocking, with deadlines)."""

    def __init__(self, cmd: list[str], env: dict):
        self.t0 = time.perf_counter()
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                     cwd=ROOT, env=env, start_new_session=True)  # its own process group
        self.sel = selectors.DefaultSelector()
        self.sel.register(self.proc.stdout, selectors.EVENT_READ)
        self.buf = b""

    def send(self, msg: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _fill(self, deadline: float) -> None:
        if not self.sel.select(max(0.0, deadline - time.perf_counter())):
            raise TimeoutError("the server did not answer in time")
        chunk = os.read(self.proc.stdout.fileno(), 65536)
        if not chunk:
            raise EOFError("the server exited")
        self.buf += chunk

    def receive(self, want, timeout: float = 30.0) -> dict:
        """The next message for which want(msg) holds (others are dropped)."""
        deadline = time.perf_counter() + timeout
        while True:
            while b"\r\n\r\n" not in self.buf:
                self._fill(deadline)
            head, rest = self.buf.split(b"\r\n\r\n", 1)
            length = int(next(h.split(b":")[1] for h in head.split(b"\r\n") if h.lower().startswith(b"content-length")))
            while len(rest) < length:
                self._fill(deadline)
                head, rest = self.buf.split(b"\r\n\r\n", 1)
            msg, self.buf = json.loads(rest[:length]), rest[length:]
            if want(msg):
                return msg

    def close(self) -> None:
        """Kill the server and every process it started (check children, workers), and wait until all are gone,
        so a round never runs beside the previous server's children still starting up."""
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
        for pid in _tilelsp_processes() - _BEFORE:  # workers run in sessions of their own
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.perf_counter() + 30
        while time.perf_counter() < deadline and (_tilelsp_processes() - _BEFORE or _alive(self.proc.pid)):
            time.sleep(0.05)


def _alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
        return True
    except ProcessLookupError:
        return False


def _tilelsp_processes() -> set[int]:
    """PIDs of running processes of tilelsp (servers, check children, workers), zombies excluded."""
    out = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if b"tilelsp" in (entry / "cmdline").read_bytes() and " Z " not in (entry / "stat").read_text():
                    out.add(int(entry.name))
            except OSError:
                continue
    return out - {os.getpid()}


_BEFORE = _tilelsp_processes()  # an editor's servers running beside the benchmark are left alone


def initialize(session: Session) -> tuple[float, float]:
    """(wall, CPU) seconds from spawning the server to its initialize response."""
    session.send({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": ROOT.as_uri(),
                                                               "capabilities": {}}})
    session.receive(lambda m: m.get("id") == 1)
    wall = time.perf_counter() - session.t0
    with open(f"/proc/{session.proc.pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return wall, (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def first_diagnostics_and_action(session: Session) -> tuple[float, float]:
    """(didOpen → publishDiagnostics, codeAction → response) in seconds, after initialize."""
    session.send({"method": "initialized", "params": {}})
    uri, text = EXAMPLE.as_uri(), EXAMPLE.read_text()
    t0 = time.perf_counter()
    session.send({"method": "textDocument/didOpen", "params": {"textDocument": {
        "uri": uri, "languageId": "python", "version": 1, "text": text}}})
    published = session.receive(lambda m: m.get("method") == "textDocument/publishDiagnostics"
                                and m["params"]["uri"] == uri and m["params"]["diagnostics"])
    t_diag = time.perf_counter() - t0
    diag = published["params"]["diagnostics"][0]
    t1 = time.perf_counter()
    session.send({"id": 2, "method": "textDocument/codeAction", "params": {
        "textDocument": {"uri": uri}, "range": diag["range"], "context": {"diagnostics": [diag]}}})
    reply = session.receive(lambda m: m.get("id") == 2)
    t_action = time.perf_counter() - t1
    assert any(a.get("kind") == "quickfix" for a in reply.get("result") or []), reply
    return t_diag, t_action


def _stats(runs: list[float]) -> dict:
    return {"median_ms": round(1000 * statistics.median(runs), 1), "min_ms": round(1000 * min(runs), 1),
            "runs_ms": [round(1000 * r, 1) for r in runs]}


def main() -> int:
    """Measure both servers, interleaved, and write the JSON result."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(ignore_cleanup_errors=True) as tmp:  # children may still be exiting
        bare = Path(tmp) / "bare_server.py"
        bare.write_text(BARE)
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = str(Path(tmp) / "pycache")
        runs: dict[str, list[float]] = {"bare_pygls_initialize": [], "tilelsp_initialize": [],
                                        "bare_pygls_initialize_cpu": [], "tilelsp_initialize_cpu": [],
                                        "tilelsp_first_diagnostics": [], "tilelsp_first_code_action": []}
        for k in range(args.rounds + 1):  # round 0 fills the bytecode cache
            s = Session([sys.executable, str(bare)], env)
            t_bare, c_bare = initialize(s)
            s.close()
            s = Session([sys.executable, "-m", "tilelsp", "serve"], env)
            t_init, c_init = initialize(s)
            t_diag, t_action = first_diagnostics_and_action(s)
            s.close()
            if k:
                for name, t in zip(runs, (t_bare, t_init, c_bare, c_init, t_diag, t_action)):
                    runs[name].append(t)
    rows = {name: _stats(r) for name, r in runs.items()}
    ratio = rows["tilelsp_initialize"]["median_ms"] / rows["bare_pygls_initialize"]["median_ms"]
    rows["initialize_ratio"] = round(ratio, 3)
    cpu = rows["tilelsp_initialize_cpu"]["median_ms"] / rows["bare_pygls_initialize_cpu"]["median_ms"]
    rows["initialize_cpu_ratio"] = round(cpu, 3)
    rows["loadavg_before_after"] = [load_before, os.getloadavg()]
    rows["cpus"] = os.cpu_count()
    for name in runs:
        print(f"{name:28s} median {rows[name]['median_ms']:7.1f} ms   min {rows[name]['min_ms']:7.1f} ms")
    print(f"initialize ratio (tilelsp / bare pygls, medians): wall {ratio:.2f}, CPU {cpu:.2f}; "
          f"load average {load_before[0]:.1f} on {os.cpu_count()} CPUs")
    out = Path(__file__).parent / "results" / "lsp_floor.json"
    out.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
