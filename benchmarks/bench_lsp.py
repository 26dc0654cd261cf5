"""Language-server latencies measured over stdio, the way an editor sees them.

It measures initialize, didChange -> publishDiagnostics for a 3-kernel file (debounce 0), hover, and
showIR `cuda` once the worker is warm. Results go to benchmarks/results/lsp.json.
Run: .venv/bin/python benchmarks/bench_lsp.py [--rounds N] [--no-showir]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SERVER = [sys.executable, "-m", "tilelsp", "serve"]
SETTINGS = {"debounceMs": 0, "lowerOnSave": False, "targets": ["sm_90a"]}
PARTS = (("gemm.py", "kernel_a = matmul(1024, 1024, 1024)\n"),
         ("elementwise_add.py", "kernel_b = elementwise_add(4096, 4096)\n"),
         ("softmax.py", "kernel_c = softmax(4096, 1024)\n"))


def three_kernel_file() -> str:
    """gemm + elementwise add + softmax from examples/, with call sites, as one file."""
    chunks = []
    for name, call in PARTS:
        text = (ROOT / "examples" / name).read_text()
        chunks.append(text.split("\ndef ref_program")[0] + "\n\n" + call)
    return "\n\n".join(chunks)


class Client:
    """A minimal JSON-RPC client: requests by id, notifications queued, server requests answered."""

    def __init__(self, proc):
        self.proc, self.next_id, self.pending, self.notes = proc, 0, {}, asyncio.Queue()
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls):
        proc = await asyncio.create_subprocess_exec(*SERVER, stdin=asyncio.subprocess.PIPE,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
        return cls(proc)

    def _write(self, msg: dict) -> None:
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    async def _read(self):
        while True:
            header = await self.proc.stdout.readuntil(b"\r\n\r\n")
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            msg = json.loads(await self.proc.stdout.readexactly(length))
            if "method" in msg and "id" in msg:  # a request from the server
                result = [SETTINGS] if msg["method"] == "workspace/configuration" else None
                self._write({"jsonrpc": "2.0", "id": msg["id"], "result": result})
            elif "method" in msg:
                await self.notes.put(msg)
            elif msg.get("id") in self.pending:
                self.pending.pop(msg["id"]).set_result(msg)

    async def request(self, method: str, params) -> dict:
        self.next_id += 1
        fut = self.pending[self.next_id] = asyncio.get_running_loop().create_future()
        self._write({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        reply = await fut
        if "error" in reply:
            raise RuntimeError(reply["error"])
        return reply["result"]

    def notify(self, method: str, params) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def diagnostics(self, uri: str, version: int) -> dict:
        while True:
            msg = await self.notes.get()
            p = msg.get("params") or {}
            if msg["method"] == "textDocument/publishDiagnostics" and p["uri"] == uri and p.get("version") == version:
                return p

    async def close(self):
        await self.request("shutdown", None)
        self.notify("exit", None)
        await self.proc.wait()
        self.reader.cancel()


def _caps():
    return {"workspace": {"configuration": True}, "window": {"workDoneProgress": False},
            "textDocument": {"hover": {"contentFormat": ["markdown"]},
                             "publishDiagnostics": {"versionSupport": True}}}


async def initialize(client: Client) -> float:
    t = time.perf_counter()
    await client.request("initialize", {"processId": os.getpid(), "rootUri": ROOT.as_uri(), "capabilities": _caps()})
    dt = time.perf_counter() - t
    client.notify("initialized", {})
    return dt


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time a process has used so far (Linux /proc), independent of machine load."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


async def bench_initialize(rounds: int) -> tuple[list[float], list[float]]:
    """Process start to the initialize response per fresh server: wall time, and the server's CPU time."""
    wall, cpu = [], []
    for _ in range(rounds):
        t = time.perf_counter()
        client = await Client.start()
        await initialize(client)
        wall.append(time.perf_counter() - t)
        used = _cpu_seconds(client.proc.pid)
        if used is not None:
            cpu.append(used)
        await client.close()
    return wall, cpu


async def bench_session(rounds: int, showir: bool) -> dict:
    client = await Client.start()
    await initialize(client)
    uri, text = (ROOT / "bench_three_kernels.py").as_uri(), three_kernel_file()
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                            "text": text}})
    first = await client.diagnostics(uri, 1)
    change, version = [], 1
    for i in range(rounds):
        version += 1
        edited = text.replace("num_stages=3", f"num_stages={2 + i % 2}")
        t = time.perf_counter()
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"text": edited}]})
        await client.diagnostics(uri, version)
        change.append(time.perf_counter() - t)
    lines = edited.splitlines()
    spots = [(i, l.index("A_shared") + 2) for i, l in enumerate(lines) if "A_shared" in l]
    spots += [(i, l.index("T.copy") + 3) for i, l in enumerate(lines) if "T.copy" in l]
    hover = []
    for n in range(rounds * 2):
        line, col = spots[n % len(spots)]
        t = time.perf_counter()
        res = await client.request("textDocument/hover", {"textDocument": {"uri": uri},
                                                          "position": {"line": line, "character": col}})
        hover.append(time.perf_counter() - t)
        assert res is not None
    result = {"didChange_to_diagnostics_s": change, "hover_s": hover,
              "diagnostics_in_file": len(first["diagnostics"])}
    if showir:
        result.update(await bench_showir(client, uri, version, edited))
    await client.close()
    return result


async def bench_showir(client: Client, uri: str, version: int, text: str) -> dict:
    """showIR cuda: cold (imports tvm in the worker), warm with the same text (cached), warm after an edit
    that changes the kernel (a full lowering in the warm worker)."""
    params = {"uri": uri, "kernel": "gemm", "stage": "cuda"}
    t = time.perf_counter()
    res = await client.request("tilelsp/showIR", params)
    cold = time.perf_counter() - t
    warm_same, warm_edit = [], []
    for i in range(3):
        t = time.perf_counter()
        await client.request("tilelsp/showIR", params)
        warm_same.append(time.perf_counter() - t)
        version += 1
        edited = text.replace("block_K=32", f"block_K={(64, 16, 128)[i]}")  # a new kernel each time
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"text": edited}]})
        await client.diagnostics(uri, version)
        t = time.perf_counter()
        await client.request("tilelsp/showIR", params)
        warm_edit.append(time.perf_counter() - t)
    save = await bench_save(client, uri, version, text)
    return {"showIR_cuda_cold_s": cold, "showIR_cuda_warm_cached_s": warm_same,
            "showIR_cuda_warm_after_edit_s": warm_edit, "cuda_lines": len(res["text"].splitlines()),
            "save_to_lower_diagnostics_s": save}


def _lower_messages(params: dict) -> set[str]:
    return {d["message"] for d in params["diagnostics"] if d.get("source") == "tilelsp-lower"}


async def bench_save(client: Client, uri: str, version: int, text: str) -> list[float]:
    """didSave -> the publish carrying "tilelsp-lower" results (all 3 kernels lowered in the warm worker)."""
    client.notify("workspace/didChangeConfiguration", {"settings": {"tilelsp": {**SETTINGS, "lowerOnSave": True}}})
    out = []
    for i in range(3):
        version += 1
        edited = text.replace("block_N=128", f"block_N={(64, 256, 32)[i]}")
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                 "contentChanges": [{"text": edited}]})
        before = _lower_messages(await client.diagnostics(uri, version))  # the last save's, kept until this one
        t = time.perf_counter()
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        while True:
            now = _lower_messages(await client.diagnostics(uri, version))
            if now and now != before:  # block_N changed, so gemm's shared-memory report changes
                break
        out.append(time.perf_counter() - t)
    return out


def _summary(samples) -> dict:
    s = sorted(samples)
    return {"p50_ms": round(statistics.median(s) * 1000, 2), "p90_ms": round(s[int(0.9 * (len(s) - 1))] * 1000, 2),
            "n": len(s)}


async def main_async(args) -> dict:
    init, init_cpu = await bench_initialize(args.init_rounds)
    session = await bench_session(args.rounds, not args.no_showir)
    report = {"initialize": _summary(init), "initialize_server_cpu": _summary(init_cpu) if init_cpu else None, "didChange_to_diagnostics": _summary(session["didChange_to_diagnostics_s"]),
              "hover": _summary(session["hover_s"]), "diagnostics_in_file": session["diagnostics_in_file"]}
    if "showIR_cuda_cold_s" in session:
        report["showIR_cuda_cold_ms"] = round(session["showIR_cuda_cold_s"] * 1000, 1)
        report["showIR_cuda_warm_cached"] = _summary(session["showIR_cuda_warm_cached_s"])
        report["showIR_cuda_warm_after_edit"] = _summary(session["showIR_cuda_warm_after_edit_s"])
        report["save_to_lower_diagnostics_warm"] = _summary(session["save_to_lower_diagnostics_s"])
    report["targets"] = {"initialize_ms": 500, "didChange_p50_ms": 100, "hover_p50_ms": 20, "showIR_cuda_warm_ms": 1000}
    report["machine"] = {"cpus": os.cpu_count(), "loadavg_at_end": os.getloadavg()}
    return report


def main() -> int:
    """Run the benchmark and write benchmarks/results/lsp.json."""
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rounds", type=int, default=30)
    ap.add_argument("--init-rounds", type=int, default=5)
    ap.add_argument("--no-showir", action="store_true")
    ap.add_argument("--out", default=str(ROOT / "benchmarks/results/lsp.json"))
    args = ap.parse_args()
    report = asyncio.run(main_async(args))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    print(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
