"""Inline suppression (`# tilelsp: ignore[code]`, `# tilelsp: ignore-file[code]`) and --select/--ignore filtering.

Pure functions over a `SourceFile` and its diagnostics; `check_source` applies them, so the CLI and the
language server drop the same diagnostics.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from .diagnostics import Diagnostic, Severity, sorted_diagnostics
from .source import SourceFile, Span

# `# tilelsp: ignore`, `# tilelsp: ignore[a, b]`, `# tilelsp: ignore-file[a]` (anywhere in a comment).
_DIRECTIVE = re.compile(r"#\s*tilelsp\s*:\s*ignore(?P<file>-file)?\b(?:\s*\[(?P<codes>[^\]]*)\])?", re.IGNORECASE)
ALL = "*"  # stands for "every code" in a Suppressions set


@dataclass
class Suppressions:
    """The suppression comments of one file: per-line code sets and whole-file codes."""

    lines: dict[int, set[str]] = field(default_factory=dict)  # comment line -> codes (ALL for every code)
    file: set[str] = field(default_factory=set)
    statements: dict[int, tuple[int, int]] = field(default_factory=dict)  # line -> (first, last) of its statement
    directives: list[tuple[Span, frozenset[str]]] = field(default_factory=list)  # each comment's span and codes

    def suppresses(self, code: str, line: int) -> bool:
        """True when a diagnostic with `code` starting on `line` is suppressed."""
        if ALL in self.file or code in self.file:
            return True
        first, last = self.statements.get(line, (line, line))
        for n in range(first, last + 1):
            codes = self.lines.get(n)
            if codes and (ALL in codes or code in codes):
                return True
        return False


def parse_codes(text: str | None) -> set[str]:
    """The codes listed inside `[...]` of a directive (ALL when there is no list or it is empty)."""
    if text is None:
        return {ALL}
    codes = {c.strip() for c in text.split(",") if c.strip()}
    return codes or {ALL}


def _comments(text: str):
    """(line, column, comment text) for every real comment token; stops quietly at a tokenize error."""
    import io
    import tokenize

    try:
        for tok in tokenize.generate_tokens(io.StringIO(text).readline):
            if tok.type == tokenize.COMMENT:
                yield tok.start[0], tok.start[1], tok.string
    except (tokenize.TokenError, SyntaxError):
        return


def _statement_ranges(text: str, wanted: set[int]) -> dict[int, tuple[int, int]]:
    """Map each line of a multi-line simple statement (or compound header) to its (first, last) lines."""
    import ast

    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    ranges: dict[int, tuple[int, int]] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt):
            continue
        first, last = _header_range(node)
        if last > first and any(first <= n <= last for n in wanted):
            for n in range(first, last + 1):
                old = ranges.get(n)
                if old is None or (old[1] - old[0]) > (last - first):  # innermost statement wins
                    ranges[n] = (first, last)
    return ranges


def _header_range(node) -> tuple[int, int]:
    """Lines of a simple statement, or of a compound statement's header (decorators to the colon)."""
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
    body = getattr(node, "body", None)
    if isinstance(body, list) and body:
        return first, max(first, body[0].lineno - 1)
    return first, node.end_lineno or node.lineno


def collect(source: SourceFile) -> Suppressions:
    """Find the suppression comments of a file (real comments only, never `#` inside strings)."""
    found = Suppressions()
    if "tilelsp" not in source.text:
        return found
    for line, col, comment in _comments(source.text):
        for m in _DIRECTIVE.finditer(comment):
            codes = parse_codes(m.group("codes"))
            found.directives.append((Span(line, col + m.start(), line, col + m.end()), frozenset(codes)))
            if m.group("file"):
                found.file |= codes
            else:
                found.lines.setdefault(line, set()).update(codes)
    if found.lines:
        found.statements = _statement_ranges(source.text, set(found.lines))
    return found


def drop_suppressed(source: SourceFile, diagnostics) -> list:
    """Only the diagnostics no `# tilelsp: ignore` comment of `source` silences (e.g. lowering findings)."""
    if "tilelsp" not in source.text:
        return list(diagnostics)
    found = collect(source)
    return [d for d in diagnostics if not found.suppresses(d.code, d.span.line)]


def filter_diagnostics(source: SourceFile, diagnostics, select=None, ignore=None) -> list:
    """Drop diagnostics not in `select`, in `ignore`, or suppressed by a comment; warn about unknown codes there."""
    keep = [d for d in diagnostics if _selected(d.code, select, ignore)]
    if "tilelsp" not in source.text:
        return keep
    found = collect(source)
    if not found.directives:
        return keep
    keep = [d for d in keep if not found.suppresses(d.code, d.span.line)]
    extra = [d for d in unknown_code_warnings(found)
             if _selected(d.code, select, ignore) and not found.suppresses(d.code, d.span.line)]
    return sorted_diagnostics(keep + extra) if extra else keep


def unknown_code_warnings(found: Suppressions) -> list[Diagnostic]:
    """A `suppression-unknown-code` warning for each code in a directive that is not in the code table."""
    from .codes import CODES

    out = []
    for span, codes in found.directives:
        for code in sorted(c for c in codes if c != ALL and c not in CODES):
            close = _close_code(code, CODES)
            hint = f"; did you mean `{close}`?" if close else "; see docs/diagnostics.md for the codes"
            out.append(Diagnostic("suppression-unknown-code", Severity.WARNING,
                                  f"`{code}` is not a tilelsp diagnostic code, so this comment suppresses nothing{hint}", span))
    return out


def _close_code(code: str, codes) -> str | None:
    import difflib

    close = difflib.get_close_matches(code, list(codes), n=1)
    return close[0] if close else None


def _selected(code: str, select, ignore) -> bool:
    """True when `code` passes the select (None = all) and ignore lists."""
    if select and code not in select:
        return False
    return not (ignore and code in ignore)


def suppression_edit(source: SourceFile, code: str, line: int):
    """A TextEdit that silences `code` at `line`: extends an existing `# tilelsp: ignore[...]` there, or appends one.

    Used by the language server's "suppress this diagnostic" quick fix; a line ending in a backslash
    continuation gets the comment on the last line of its statement instead.
    """
    from .diagnostics import TextEdit

    line = _comment_line(source, line)
    text = source.line_text(line)
    for _, col, comment in _comments(text + "\n"):
        m = _DIRECTIVE.search(comment)
        if m and not m.group("file"):
            codes = parse_codes(m.group("codes"))
            if ALL in codes or code in codes:
                return None  # already suppressed
            start, end = col + m.start(), col + m.end()
            new = f"# tilelsp: ignore[{', '.join(sorted(codes | {code}))}]"
            return TextEdit(Span(line, start, line, end), new)
    end = len(text.rstrip())
    return TextEdit(Span(line, end, line, len(text)), f"  # tilelsp: ignore[{code}]")


def _comment_line(source: SourceFile, line: int) -> int:
    """`line`, or the first line after it that does not end in a backslash continuation."""
    while line < len(source.lines) and source.line_text(line).rstrip().endswith("\\"):
        line += 1
    return line
