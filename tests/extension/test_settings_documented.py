"""Every `tilelsp.*` setting the docs name is declared in the VS Code extension (else VS Code never sends it)."""
from __future__ import annotations

import json
import re

from tests.conftest import ROOT

MANIFEST = json.loads((ROOT / "vscode-extension" / "package.json").read_text(encoding="utf-8"))
DOCS = sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md", ROOT / "vscode-extension" / "README.md"]
# `tilelsp.x` spellings in the docs that are not VS Code settings: file names and Neovim's lspconfig entry (and the
# package's own modules, `python -m tilelsp.cli.reference`: see _is_module)
NOT_SETTINGS = {"tilelsp.vsix", "tilelsp.lua", "tilelsp.sarif", "tilelsp.setup"}
NAME = re.compile(r"`[^`\n]*?\b(tilelsp(?:\.[A-Za-z_]\w*)+)")


def _declared() -> tuple[set[str], set[str]]:
    contributes = MANIFEST["contributes"]
    config = contributes["configuration"]
    sections = config if isinstance(config, list) else [config]
    settings = {name for section in sections for name in section["properties"]}
    commands = {c["command"] for c in contributes["commands"]}
    return settings, commands


def documented_names() -> dict[str, str]:
    """Each `tilelsp.*` name written in backticks in the docs, with the first file naming it."""
    out: dict[str, str] = {}
    for path in DOCS:
        for name in NAME.findall(path.read_text(encoding="utf-8")):
            out.setdefault(name, path.relative_to(ROOT).as_posix())
    return out


def _is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def test_every_documented_setting_is_declared():
    settings, commands = _declared()
    undeclared = {name: where for name, where in documented_names().items()
                  if name not in settings | commands | NOT_SETTINGS and not name.startswith("tilelsp.server.")
                  and not _is_module(name)}
    assert not undeclared, f"named in the docs but not declared in vscode-extension/package.json: {undeclared}"


def test_the_ray_address_setting_is_declared_and_documented():
    settings, _ = _declared()
    assert "tilelsp.ray.address" in settings and "tilelsp.ray.address" in documented_names()


def test_every_declared_setting_is_documented():
    settings, _ = _declared()
    assert not settings - set(documented_names()), "declared but never described in docs/: document them"
