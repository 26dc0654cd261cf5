"""The registry of TileLang builtins: every entry of `catalog.py` by its qualified name and its aliases.

The frontend looks builtins up here and binds call arguments through `builtin.bind`; hover, completion, signature
help and docs/language.md read the same entries.
"""
from __future__ import annotations

from .builtin import Builtin

_REGISTRY: dict[str, Builtin] | None = None


def registry() -> dict[str, Builtin]:
    """All builtins by qualified name (aliases included), loaded once."""
    global _REGISTRY
    if _REGISTRY is None:
        from .catalog import BUILTINS

        reg = {}
        for b in BUILTINS:
            reg[b.name] = b
            for a in b.aliases:
                reg[a] = b
        _REGISTRY = reg
    return _REGISTRY


def lookup(name: str) -> Builtin | None:
    """The builtin for a qualified name like "T.copy" or "tilelang.jit" (None if unknown)."""
    return registry().get(name)
