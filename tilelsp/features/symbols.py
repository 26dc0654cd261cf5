"""Resolving what the user wrote (`T.copy`, `tl.language.gemm`, `tilelang.jit`) to registry names.

Import aliases are read from the file's import lines with a regex (no ast, no import); canonical
names are `T.<name>` for `tilelang.language` and `tilelang.<name>` for the top level.
"""
from __future__ import annotations

import re

_PKG = r"(?:tilelang|tilelang_core)"
_IMPORT_LANG = re.compile(rf"^\s*import\s+{_PKG}\.language\s+as\s+(\w+)", re.M)
_FROM_LANG = re.compile(rf"^\s*from\s+{_PKG}\s+import\s+language(?:\s+as\s+(\w+))?", re.M)
_IMPORT_TOP = re.compile(rf"^\s*import\s+({_PKG})(?:\s+as\s+(\w+))?\s*$", re.M)
_FROM_NAMES = re.compile(rf"^\s*from\s+{_PKG}\.language\s+import\s+([\w\s,]+)$", re.M)
_DOTTED = re.compile(r"[A-Za-z_][\w]*(?:\s*\.\s*[A-Za-z_]\w*)*")


def import_aliases(text: str) -> dict[str, str]:
    """Map each local name to the canonical prefix it stands for ("T" or "tilelang"), or a full name."""
    aliases = {"T": "T"}
    for m in _IMPORT_LANG.finditer(text):
        aliases[m.group(1)] = "T"
    for m in _FROM_LANG.finditer(text):
        aliases[m.group(1) or "language"] = "T"
    for m in _IMPORT_TOP.finditer(text):
        aliases[m.group(2) or m.group(1)] = "tilelang"
    for m in _FROM_NAMES.finditer(text):
        for part in m.group(1).split(","):
            bits = part.split()
            if bits:
                aliases[bits[-1]] = f"T.{bits[0]}"
    return aliases


def canonical(name: str, aliases: dict[str, str]) -> str | None:
    """The registry name for a dotted name as written (None when it is not TileLang's)."""
    parts = name.replace(" ", "").split(".")
    head = aliases.get(parts[0])
    if head is None:
        return None
    if head.startswith("T."):
        return head if len(parts) == 1 else None
    rest = parts[1:]
    if head == "tilelang" and rest[:1] == ["language"]:
        head, rest = "T", rest[1:]
    return f"{head}.{'.'.join(rest)}" if rest else None


def dotted_at(line_text: str, col: int) -> tuple[str, int, int] | None:
    """The dotted name under column `col` on a line, up to the component under the cursor: (text, start, end)."""
    for m in _DOTTED.finditer(line_text):
        if m.start() <= col <= m.end():
            end = m.end()
            nxt = line_text.find(".", col)
            if nxt != -1 and nxt < end:
                end = nxt
            return line_text[m.start():end], m.start(), end
    return None


def builtin_at(text: str, line_text: str, col: int, aliases: dict[str, str] | None = None):
    """(Builtin, start, end) for the TileLang builtin named under the cursor, or None."""
    from tilelang_core.language.registry import lookup

    found = dotted_at(line_text, col)
    if not found:
        return None
    name, start, end = found
    qual = canonical(name, aliases if aliases is not None else import_aliases(text))
    try:
        builtin = lookup(qual) if qual else None
    except ImportError:
        return None
    return (builtin, start, end) if builtin else None
