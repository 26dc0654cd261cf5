"""Hover text of the TileLang builtins, keyed by qualified name; `catalog.py` attaches it to the entries."""
from __future__ import annotations

DOCS: dict[str, str] = {}
