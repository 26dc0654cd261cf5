"""A real editor end to end: headless Neovim opens an example with an error and receives tilelsp's
diagnostics through its built-in LSP client, and runs docs/neovim.md's config and commands. Neovim is installed
with apt-get when missing and allowed (CI=1 or TILELSP_APT=1, as root on Debian, as .ci/run runs); otherwise these
tests skip."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INIT = Path(__file__).with_name("nvim") / "init.lua"


@pytest.fixture(scope="module", autouse=True)
def nvim():
    """Neovim, installed when missing and allowed (see tests/conftest.py: system_tool), else the tests skip."""
    from tests.conftest import system_tool

    if system_tool("nvim", "neovim") is None:
        pytest.skip("needs nvim: sudo apt-get install -y neovim (or run with CI=1 or TILELSP_APT=1 as root to let "
                    "the tests install it)")


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


def _nvim_version() -> tuple[int, ...]:
    import re

    out = subprocess.run(["nvim", "--version"], capture_output=True, text=True, timeout=30).stdout
    return tuple(int(x) for x in re.search(r"NVIM v(\d+)\.(\d+)\.(\d+)", out).groups())


DRIVER = r'''
vim.api.nvim_create_autocmd("VimEnter", {
  callback = function()
    local function client()
      if vim.lsp.get_clients then return vim.lsp.get_clients({ name = "tilelsp" })[1] end
      for _, c in pairs(vim.lsp.buf_get_clients(0)) do if c.name == "tilelsp" then return c end end
    end
    local attached = vim.wait(60000, function() local c = client(); return c ~= nil and c.server_capabilities ~= nil end, 50)
    local source = vim.api.nvim_get_current_buf()
    vim.cmd("TileLayout C_local")
    local shown = vim.wait(60000, function() return vim.api.nvim_get_current_buf() ~= source end, 50)
    local f = io.open(os.getenv("TILELSP_OUT"), "w")
    f:write(vim.fn.json_encode({ attached = attached, shown = shown, name = vim.api.nvim_buf_get_name(0),
                                 lines = vim.api.nvim_buf_get_lines(0, 0, -1, false) }))
    f:close()
    vim.cmd("qa!")
  end,
})
'''


def test_docs_config_for_this_neovim_attaches_and_shows_a_layout(tmp_path):
    """docs/neovim.md's config for the installed Neovim (0.7 - 0.9 or 0.10+) plus its commands snippet, headless on
    examples/gemm.py: the server attaches and :TileLayout C_local opens the accumulator's text grid."""
    import re

    blocks = re.findall(r"```lua\n(.*?)```", (ROOT / "docs/neovim.md").read_text(), re.S)
    marker = "vim.fs.root" if _nvim_version() >= (0, 10, 0) else "vim.lsp.start_client"
    config = next(b for b in blocks if marker in b).replace("/path/to/venv/bin/python", sys.executable)
    commands = next(b for b in blocks if "TileLayout" in b)
    init = tmp_path / "init.lua"
    init.write_text(config + "\n" + commands + "\n" + DRIVER)
    out = tmp_path / "layout.json"
    env = dict(os.environ, TILELSP_OUT=str(out), XDG_STATE_HOME=str(tmp_path), XDG_DATA_HOME=str(tmp_path),
               XDG_CONFIG_HOME=str(tmp_path))
    run = subprocess.run(["nvim", "--headless", "-n", "-i", "NONE", "-u", str(init), str(ROOT / "examples/gemm.py")],
                         cwd=ROOT, env=env, timeout=150, stdin=subprocess.DEVNULL, capture_output=True, text=True)
    assert out.exists(), run.stdout[-2000:] + run.stderr[-2000:]
    data = json.loads(out.read_text())
    assert data["attached"] and data["shown"], data
    assert data["lines"][0] == "C_local: local.fragment 128x128 float32 — wgmma accumulator", data["lines"][:3]
    assert any(line.startswith("warp holding each element") for line in data["lines"])
    assert "layout C_local sm_90a" in data["name"]
