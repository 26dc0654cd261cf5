"""docs/cli.md documents every command and flag the parser has (its flag reference is generated from the parser)."""
from __future__ import annotations

import re

from tilelsp.cli import reference as cli_reference


def test_docs_cli_flag_reference_matches_the_parser():
    assert cli_reference.main(["--check"]) == 0, "run `python -m tilelsp.cli.reference` to regenerate docs/cli.md"


def test_every_command_and_flag_is_in_docs_cli():
    text = cli_reference.DOC.read_text(encoding="utf-8")
    for name, parser in cli_reference.commands().items():
        if name:
            assert f"#### `tilelsp {name}`" in text and re.search(rf"^## `tilelsp {name}`|`tilelsp {name}", text, re.M)
        for action in cli_reference.visible_actions(parser):
            for flag in action.option_strings:
                assert f"`{flag}`" in text, f"tilelsp {name}: {flag} is not in docs/cli.md"


def test_a_parser_change_makes_the_reference_stale(monkeypatch):
    text = cli_reference.DOC.read_text(encoding="utf-8")
    build = cli_reference.build_parser

    def with_new_flag():
        parser = build()
        cli_reference.commands(parser)["check"].add_argument("--brand-new", help="a flag the docs lack")
        return parser

    monkeypatch.setattr(cli_reference, "build_parser", with_new_flag)
    assert cli_reference.rewrite(text) != text and "`--brand-new`" in cli_reference.rewrite(text)
