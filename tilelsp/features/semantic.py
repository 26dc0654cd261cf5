"""Semantic tokens (optional feature): TileLang builtins, dtypes, and buffers tagged with their memory scope,
so a theme can colour shared, fragment and global buffers differently."""
from __future__ import annotations

import re
from dataclasses import dataclass

from .positions import lsp_lines
from .symbols import canonical, import_aliases

TOKEN_TYPES = ("function", "type", "variable", "parameter")
TOKEN_MODIFIERS = ("defaultLibrary", "declaration", "shared", "fragment", "local", "global")
_SCOPE_MOD = {"shared": "shared", "shared.dyn": "shared", "local.fragment": "fragment", "local": "local",
              "local.var": "local", "global": "global"}
_DOTTED = re.compile(r"\b[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


@dataclass(frozen=True, order=True)
class Token:
    """One token at (1-based line, code-point col) with `length` code points."""

    line: int
    col: int
    length: int
    type: str
    modifiers: tuple[str, ...] = ()


def builtin_tokens(text: str, lines: list[str]) -> list[Token]:
    """`T.copy`, `T.float16`, `tilelang.jit` ... as defaultLibrary functions or types."""
    from tilelang_core.language.registry import registry

    reg, aliases, out = registry(), import_aliases(text), []
    for n, line in enumerate(lines, 1):
        if "#" in line:
            line = line[: line.index("#")]
        for m in _DOTTED.finditer(line):
            b = reg.get(canonical(m.group(0), aliases) or "")
            if b is not None:
                kind = "type" if b.kind in ("dtype", "type") else "function"
                out.append(Token(n, m.start(), m.end() - m.start(), kind, ("defaultLibrary",)))
    return out


def buffer_tokens(result) -> list[Token]:
    """Every declaration and use of a buffer, with its scope as a modifier."""
    out, lines = set(), lsp_lines(result.source.text)
    for b in getattr(getattr(result, "facts", None), "buffers", None) or ():
        mod = _SCOPE_MOD.get(b.scope, "global")
        kind = "parameter" if b.scope == "global" else "variable"
        for s in getattr(b, "uses", None) or ():
            if s.line == s.end_line and s.end_col - s.col == len(b.name):
                out.add(Token(s.line, s.col, len(b.name), kind, (mod,)))
        if b.span is not None and 1 <= b.span.line <= len(lines):
            m = re.search(rf"\b{re.escape(b.name)}\b", lines[b.span.line - 1])
            if m:
                out.add(Token(b.span.line, m.start(), len(b.name), kind, ("declaration", mod)))
    return sorted(out)


def semantic_tokens(result) -> list[Token]:
    """All tokens of a document, sorted, without overlaps (buffers win over builtins)."""
    text = result.source.text
    tokens = sorted(set(buffer_tokens(result)) | set(builtin_tokens(text, lsp_lines(text))))
    out: list[Token] = []
    for t in tokens:
        if out and out[-1].line == t.line and t.col < out[-1].col + out[-1].length:
            continue
        out.append(t)
    return out


def encode(tokens: list[Token], lines: list[str], to_units) -> list[int]:
    """LSP's relative integer encoding; `to_units(line_text, col)` converts code points to the encoding."""
    data, prev_line, prev_start = [], 0, 0
    for t in tokens:
        text = lines[t.line - 1] if t.line <= len(lines) else ""
        start = to_units(text, t.col)
        length = to_units(text, t.col + t.length) - start
        line = t.line - 1
        data += [line - prev_line, start - prev_start if line == prev_line else start, length,
                 TOKEN_TYPES.index(t.type), sum(1 << TOKEN_MODIFIERS.index(m) for m in t.modifiers)]
        prev_line, prev_start = line, start
    return data
