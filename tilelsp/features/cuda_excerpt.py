"""The CUDA excerpt a hover shows for one statement: the first place the lowering emitted it (a stream-K remainder or a
tail loop emits the same statement again further down), with long index arithmetic shown as `…` so the
instructions that implement the statement stand out. The full CUDA is one click away (Show CUDA)."""
from __future__ import annotations

import re

ELIDE_OVER = 16  # characters of index arithmetic kept as written; a longer subscript or term becomes `…`
_ARITHMETIC = re.compile(r"[\w\s.+\-*/%<>&|^()\[\]]*")
_ADDRESS = re.compile(r"&\(|\*\)")  # taking an address, or a pointer cast: a buffer, not index arithmetic
_MARKER = "// tilelang source line"
_CLOSE = {"(": ")", "[": "]"}


def runs(lines: list[int]) -> list[list[int]]:
    """Consecutive line numbers grouped: [3, 4, 5, 9, 10] -> [[3, 4, 5], [9, 10]]."""
    out: list[list[int]] = []
    for n in lines:
        if out and n == out[-1][-1] + 1:
            out[-1].append(n)
        else:
            out.append([n])
    return out


def _match(text: str, i: int) -> int:
    """The index of the bracket closing the one at `i`, or -1 when the line does not balance."""
    depth = 0
    for j in range(i, len(text)):
        if text[j] in "([":
            depth += 1
        elif text[j] in ")]":
            depth -= 1
            if depth == 0:
                return j
    return -1


def _is_index_arithmetic(inner: str) -> bool:
    return (len(inner) > ELIDE_OVER and _ARITHMETIC.fullmatch(inner) is not None
            and _ADDRESS.search(inner) is None and re.search(r"[+\-*/%<>&|^]", inner) is not None)


def elide_arithmetic(line: str) -> str:
    """`line` with each subscript or parenthesised term of long index arithmetic written `[…]` / `(…)`; calls,
    casts and address-of stay as written."""
    out, i = [], 0
    while i < len(line):
        c = line[i]
        end = _match(line, i) if c in _CLOSE else -1
        if end < 0:
            out.append(c)
            i += 1
            continue
        inner = line[i + 1:end]
        before = "".join(out).rstrip()[-1:]
        is_call = c == "(" and (before.isalnum() or before in "_>")
        if not is_call and _is_index_arithmetic(inner):
            out.append(c + "…" + _CLOSE[c])
        else:
            out.append(c + elide_arithmetic(inner) + _CLOSE[c])
        i = end + 1
    return "".join(out)


def statement_excerpt(cuda_lines: list[str], mapped: list[int]) -> tuple[list[int], list[str], int, int]:
    """(the first run of `mapped` lines, its text dedented and elided, lines in the other runs, how many runs
    more) for a statement whose CUDA lines (1-based) are `mapped`."""
    groups = [[n for n in g if 0 < n <= len(cuda_lines) and cuda_lines[n - 1].strip()
               and not cuda_lines[n - 1].strip().startswith(_MARKER)] for g in runs(mapped)]
    groups = [g for g in groups if g]
    if not groups:
        return [], [], 0, 0
    first = [cuda_lines[n - 1] for n in groups[0]]
    indent = min(len(ln) - len(ln.lstrip()) for ln in first)
    return groups[0], [elide_arithmetic(ln[indent:]) for ln in first], sum(map(len, groups[1:])), len(groups) - 1
