"""What `tilelsp serve` does before it answers `initialize`: the capabilities it always advertised, and nothing
imported that the answer does not need (argparse, the CLI's check machinery, the feature modules, libcst, tvm)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tilelang_core import __version__

ROOT = Path(__file__).resolve().parents[2]

CAPABILITIES = {
    "positionEncoding": "utf-16",
    "textDocumentSync": {"openClose": True, "change": 2, "save": {"includeText": False}},
    "completionProvider": {"triggerCharacters": ["."]},
    "hoverProvider": True,
    "signatureHelpProvider": {"triggerCharacters": ["(", ","], "retriggerCharacters": [","]},
    "codeActionProvider": {"codeActionKinds": ["quickfix", "source"]},
    "codeLensProvider": {"resolveProvider": False},
    "executeCommandProvider": {"commands": ["tilelsp.server.verify", "tilelsp.server.benchmark",
                                            "tilelsp.server.showIR", "tilelsp.server.sanitize",
                                            "tilelsp.server.autotune", "tilelsp.server.metamorphic"]},
    "semanticTokensProvider": {"legend": {
        "tokenTypes": ["function", "type", "variable", "parameter"],
        "tokenModifiers": ["defaultLibrary", "declaration", "shared", "fragment", "local", "global"]}, "full": True},
    "inlayHintProvider": {"resolveProvider": False},
    "diagnosticProvider": {"interFileDependencies": False, "workspaceDiagnostics": False, "identifier": "tilelsp"},
    "workspace": {"workspaceFolders": {"supported": True, "changeNotifications": True}, "fileOperations": {}},
}

# `python -m tilelsp serve` run in this process; at its first write to stdout (the initialize response) it reports
# the modules imported so far and whether the startup objects were frozen out of the collector's way, and exits
UNTIL_RESPONSE = """
import gc, io, json, os, runpy, sys
class Out(io.RawIOBase):
    def writable(self): return True
    def write(self, b):
        report = {"response": bytes(b).decode(), "modules": sorted(sys.modules), "frozen": gc.get_freeze_count()}
        os.write(2, json.dumps(report).encode()); os._exit(0)
sys.stdout = io.TextIOWrapper(io.BufferedWriter(Out()))
sys.argv, sys.path[0] = ["tilelsp", "serve"], os.getcwd()
runpy.run_module("tilelsp", run_name="__main__", alter_sys=True)
"""
NOT_BEFORE_INITIALIZE = (
    "argparse", "tilelsp.cli.formats", "tilelsp.cli.loading",  # the CLI's parser and its check path
    "tilelsp.features.hover", "tilelsp.features.inlay", "tilelsp.features.codelens", "tilelsp.features.completion",
    "tilelsp.features.actions", "tilelsp.features.ir_view", "tilelsp.features.verify", "tilelsp.cluster.connection",
    "tilelsp.server.worker", "libcst", "tilelang_core.frontend", "tilelang_core.analysis", "tvm", "torch",
)


def _frame(msg: dict) -> bytes:
    body = json.dumps({"jsonrpc": "2.0", **msg}).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _initialize() -> bytes:
    return _frame({"id": 1, "method": "initialize", "params": {"processId": None, "rootUri": ROOT.as_uri(),
                                                                "capabilities": {}}})


def test_initialize_advertises_the_same_capabilities():
    proc = subprocess.run([sys.executable, "-m", "tilelsp", "serve"], cwd=ROOT, capture_output=True, timeout=60,
                          input=_initialize() + _frame({"id": 2, "method": "shutdown"}) + _frame({"method": "exit"}))
    body = proc.stdout.split(b"\r\n\r\n", 1)[1].decode()
    result = json.JSONDecoder().raw_decode(body)[0]["result"]
    assert result["capabilities"] == CAPABILITIES
    assert result["serverInfo"] == {"name": "tilelsp", "version": __version__}


def test_answering_initialize_imports_only_what_it_needs():
    proc = subprocess.run([sys.executable, "-c", UNTIL_RESPONSE], cwd=ROOT, input=_initialize(), capture_output=True,
                          timeout=60)
    report = json.loads(proc.stderr.decode().splitlines()[-1])
    assert '"id": 1' in report["response"] and "capabilities" in report["response"]
    modules = set(report["modules"])
    assert "tilelsp.server.app" in modules
    assert sorted(m for m in modules if m.split(".")[0] in {"tvm", "torch", "libcst"} or m in NOT_BEFORE_INITIALIZE) \
        == []
    assert report["frozen"] > 10000  # the imported modules' objects are out of the collector's way
