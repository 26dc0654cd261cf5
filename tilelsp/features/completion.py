"""Completion after `T.` (any alias of tilelang.language / tilelang) and signature help inside `T.*(`."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .symbols import canonical, import_aliases

_PREFIX = re.compile(r"([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\.(\w*)$")


@dataclass(frozen=True)
class Item:
    """One completion item."""

    label: str
    kind: str
    detail: str
    doc: str


def _registry():
    from tilelang_core.language.registry import registry

    try:
        return registry()
    except ImportError:
        return {}


def completions(text: str, line_text: str, col: int) -> list[Item]:
    """Registry entries whose module matches the qualifier before the cursor (`T.co|` -> T.copy, ...)."""
    m = _PREFIX.search(line_text[:col])
    if not m:
        return []
    qual, partial = m.group(1), m.group(2)
    head = canonical(qual + ".x", import_aliases(text))
    if head is None:
        return []
    module = head[:-2]
    items, seen = [], set()
    for name, b in sorted(_registry().items()):
        mod, _, short = name.rpartition(".")
        if mod != module or not short.startswith(partial) or short in seen:
            continue
        seen.add(short)
        items.append(Item(short, b.kind, b.signature, b.doc))
    return items


@dataclass(frozen=True)
class Signature:
    """Signature help: the builtin's signature, parameter labels and the active parameter."""

    label: str
    doc: str
    params: tuple[tuple[str, str], ...]
    active: int


def _enclosing_call(before: str):
    depth, commas, kw = 0, 0, None
    for i in range(len(before) - 1, -1, -1):
        ch = before[i]
        if ch in ")]}":
            depth += 1
        elif ch in "([{":
            if depth == 0:
                if ch != "(":
                    return None
                m = re.search(r"([A-Za-z_][\w.]*)\s*$", before[:i])
                return (m.group(1), commas, kw) if m else None
            depth -= 1
        elif ch == "," and depth == 0:
            commas += 1
        elif ch == "=" and depth == 0 and commas == 0 and kw is None:
            m = re.search(r"(\w+)\s*$", before[:i])
            kw = m.group(1) if m and before[i - 1:i + 1] != "==" else None
    return None


def signature_help(text: str, offset: int) -> Signature | None:
    """Signature help for the innermost `T.*(` call around a character offset (looks back 2,000 chars)."""
    before = text[max(0, offset - 2000):offset]
    found = _enclosing_call(before)
    if not found:
        return None
    name, commas, kw = found
    qual = canonical(name, import_aliases(text))
    b = _registry().get(qual) if qual else None
    if b is None:
        return None
    params = tuple((p.name, p.doc) for p in b.params)
    active = next((i for i, p in enumerate(b.params) if p.name == kw), None)
    if active is None:
        positional = [i for i, p in enumerate(b.params) if not p.keyword_only]
        variadic = next((i for i, p in enumerate(b.params) if p.variadic), None)
        active = positional[commas] if commas < len(positional) else (variadic if variadic is not None else len(params))
        if variadic is not None and commas >= variadic:
            active = variadic
    return Signature(b.signature, b.doc, params, active)
