"""The pygls floor for `initialize`: process start → first byte of the initialize response, for a bare pygls 2
server (no features) and for `tilelsp serve`, side by side (medians of 7 runs).

Usage: python benchmarks/lsp_floor.py   (writes benchmarks/results/lsp_floor.json)
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BARE = "from pygls.lsp.server import LanguageServer\nLanguageServer('floor', '0').start_io()\n"


def time_initialize(cmd: list[str]) -> float:
    """Seconds from spawning `cmd` to the first line of its initialize response."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                       "params": {"processId": None, "rootUri": None, "capabilities": {}}}).encode()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    proc.stdin.flush()
    proc.stdout.readline()
    elapsed = time.perf_counter() - t0
    proc.kill()
    proc.wait()
    return elapsed


def main() -> int:
    """Measure both servers and write the JSON result."""
    with tempfile.TemporaryDirectory() as tmp:
        bare = Path(tmp) / "bare_server.py"
        bare.write_text(BARE)
        rows = {}
        for name, cmd in (("bare_pygls", [sys.executable, str(bare)]),
                          ("tilelsp_serve", [sys.executable, "-m", "tilelsp", "serve"])):
            runs = [time_initialize(cmd) for _ in range(7)]
            rows[name] = {"median_ms": round(1000 * statistics.median(runs), 1),
                          "runs_ms": [round(1000 * r, 1) for r in runs]}
            print(f"{name:14s} median {rows[name]['median_ms']:.0f} ms")
    rows["loadavg"] = os.getloadavg()
    out = Path(__file__).parent / "results" / "lsp_floor.json"
    out.write_text(json.dumps(rows, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
