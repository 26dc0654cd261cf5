"""A real editor end to end: headless Neovim opens an example with an error and receives tilelsp's
diagnostics through its built-in LSP client (skipped when `nvim` is not installed)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INIT = Path(__file__).with_name("nvim") / "init.lua"


@pytest.mark.skipif(shutil.which("nvim") is None, reason="needs nvim (apt-get install -y neovim)")
def test_neovim_receives_diagnostics(tmp_path):
    out = tmp_path / "diagnostics.json"
    example = ROOT / "examples/errors/threads_exceeded.py"
    env = dict(os.environ, TILELSP_PYTHON=sys.executable, TILELSP_OUT=str(out), XDG_STATE_HOME=str(tmp_path),
               XDG_DATA_HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path))
    subprocess.run(["nvim", "--headless", "-n", "-i", "NONE", "-u", str(INIT), str(example)],
                   cwd=ROOT, env=env, timeout=120, check=False, stdin=subprocess.DEVNULL, capture_output=True)
    data = json.loads(out.read_text())
    assert data["ok"], data
    [diag] = [d for d in data["diagnostics"] if d["code"] == "threads-exceeded"]
    line = next(i for i, l in enumerate(example.read_text().splitlines()) if "# error: [threads-exceeded]" in l)
    assert diag["lnum"] == line and diag["source"] == "tilelsp"
    text = example.read_text().splitlines()[line]
    assert text[diag["col"]:diag["end_col"]] == "2048"


@pytest.mark.skipif(shutil.which("nvim") is None, reason="needs nvim (apt-get install -y neovim)")
def test_docs_show_ir_snippet_loads(tmp_path):
    """The IR commands snippet of docs/neovim.md is valid Lua for this Neovim and defines its commands."""
    import re

    blocks = re.findall(r"```lua\n(.*?)```", (ROOT / "docs/neovim.md").read_text(), re.S)
    snippet = next(b for b in blocks if "TileCuda" in b)
    (tmp_path / "snippet.lua").write_text(snippet)
    out = subprocess.run(["nvim", "--headless", "-u", "NONE", "-i", "NONE", "-c", f"luafile {tmp_path / 'snippet.lua'}",
                          "-c", "lua io.stdout:write(vim.fn.exists(':TileCuda') .. vim.fn.exists(':TileIR'))", "-c", "q"],
                         capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert out.stdout.strip().endswith("22"), out.stdout + out.stderr
