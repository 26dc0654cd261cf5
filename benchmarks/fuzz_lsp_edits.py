"""Random-edit fuzzing of the language server's document sync, over stdio like an editor, plus hover latency
on a normal document while pathological ones are open (the inputs of issue 9 with the real check, and a
document whose check never ends, through the stand-in child tests/lsp/slow_checker.py).

Random incremental edits (U+2028, form feed, surrogate pairs, past-end, mid-character and reversed ranges;
tests/lsp/edit_model.py) go to `tilelsp serve`; after every batch the server's text (`tilelsp/documentText`)
is compared with the reference model. Results go to benchmarks/results/lsp_fuzz.json.
Run: .venv/bin/python benchmarks/fuzz_lsp_edits.py [--edits 10000] [--seed 1] [--encoding utf-16]
"""
from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import sys
import time
from pathlib import Path

from lsprotocol.converters import get_converter

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "lsp"))
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_lsp import SERVER, Client  # noqa: E402
from edit_model import apply, random_change  # noqa: E402

PATHOLOGICAL = {  # inputs that once hung the check (issue 9)
    "stages.py": "import tilelang\nimport tilelang.language as T\n\n@tilelang.jit\ndef k(N, num_stages=10**18):\n"
                 "    @T.prim_func\n    def main(A: T.Tensor((N,), T.float32)):\n"
                 "        with T.Kernel(1, threads=128) as bx:\n"
                 "            for i in T.Pipelined(N // 64, num_stages=num_stages):\n                A[i] = 0\n"
                 "    return main\n\nkernel = k(1024)\n",
    "nested_max.py": "import tilelang\nimport tilelang.language as T\n\n@tilelang.jit\ndef k(N):\n"
                     "    @T.prim_func\n    def main(A: T.Tensor((N,), T.float32)):\n"
                     "        with T.Kernel(1, threads=128) as bx:\n            A[0] = "
                     + "T.max(" * 18 + "A[1]" + ", A[2])" * 18 + "\n    return main\n\nkernel = k(1024)\n",
}


async def fuzz(client: Client, edits: int, seed: int, encoding: str) -> dict:
    """Send `edits` random changes in batches; count batches where the server's text differs from the model."""
    conv, rng = get_converter(), random.Random(seed)
    uri, text, version, sent, batches, mismatches = "file:///tmp/fuzz_lsp_edits.py", "x = 1\n", 1, 0, 0, 0
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                           "text": text}})
    began = time.perf_counter()
    while sent < edits:
        for _ in range(rng.randrange(1, 5)):
            changes = []
            for _ in range(rng.randrange(1, 4)):
                change = random_change(rng, text, encoding)
                text = apply(text, change, encoding)
                changes.append(conv.unstructure(change))
            version += 1
            sent += len(changes)
            client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": version},
                                                     "contentChanges": changes})
        batches += 1
        got = (await client.request("tilelsp/documentText", {"uri": uri}))["text"]
        if got != text:
            mismatches += 1
            print(f"mismatch at version {version}: server {got[:80]!r} model {text[:80]!r}", file=sys.stderr)
            text = got  # go on from the server's text
    return {"edits": sent, "batches": batches, "mismatches": mismatches, "encoding": encoding, "seed": seed,
            "seconds": round(time.perf_counter() - began, 2)}


async def hover_latency(client: Client, documents: dict, rounds: int = 20) -> dict:
    """Edit examples/gemm.py and hover on it (a fresh check each round) while `documents` (name -> text) are
    open and being checked; the first hover, before they are opened, warms the server and is not counted."""
    uri = (ROOT / "examples" / "gemm.py").as_uri()
    text = (ROOT / "examples" / "gemm.py").read_text()
    line = next(i for i, l in enumerate(text.splitlines()) if "T.gemm(" in l)
    hover = {"textDocument": {"uri": uri}, "position": {"line": line, "character": text.splitlines()[line].index("T.gemm(") + 3}}
    client.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1,
                                                           "text": text}})
    await client.request("textDocument/hover", hover)
    for name, body in documents.items():
        client.notify("textDocument/didOpen", {"textDocument": {"uri": f"file:///tmp/{name}", "languageId": "python",
                                                               "version": 1, "text": body}})
    times = []
    for n in range(2, rounds + 2):
        end = {"line": len(text.splitlines()), "character": 0}
        client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": n}, "contentChanges": [
            {"range": {"start": end, "end": end}, "text": f"# edit {n}\n"}]})
        t0 = time.perf_counter()
        await client.request("textDocument/hover", hover)
        times.append((time.perf_counter() - t0) * 1000)
    return {"hover_ms_max": round(max(times), 1), "hover_ms_median": round(sorted(times)[len(times) // 2], 1),
            "rounds": rounds, "open": list(documents), "all_ms": [round(t) for t in times]}


async def start(encoding: str = "utf-16", env=None) -> Client:
    """A started and initialized server (`env` for its process)."""
    proc = await asyncio.create_subprocess_exec(*SERVER, stdin=asyncio.subprocess.PIPE, env=env,
                                                stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL)
    client = Client(proc)
    await client.request("initialize", {"processId": None, "rootUri": ROOT.as_uri(),
                                        "capabilities": {"general": {"positionEncodings": [encoding]}}})
    client.notify("initialized", {})
    return client


async def stop(client: Client) -> None:
    """shutdown + exit."""
    await client.request("shutdown", None)
    client.notify("exit", None)
    client.reader.cancel()


async def main() -> int:
    """Run the fuzz and the latency probe; print and save the figures."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--edits", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--encoding", choices=("utf-16", "utf-8", "utf-32"), default="utf-16")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "lsp_fuzz.json"))
    args = ap.parse_args()
    client = await start(args.encoding)
    report = await fuzz(client, args.edits, args.seed, args.encoding)
    report["real_check"] = await hover_latency(client, PATHOLOGICAL)
    await stop(client)
    slow = f"{sys.executable} {ROOT / 'tests' / 'lsp' / 'slow_checker.py'}"
    client = await start(env={**os.environ, "TILELSP_CHECK_CMD": slow})
    report["never_ending_check"] = await hover_latency(client, {"spins.py": "# SLOW_CHECK\n"})
    await stop(client)
    print(json.dumps(report, indent=2))
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n")
    return 1 if report["mismatches"] else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
