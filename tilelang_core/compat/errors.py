"""`tilelang.errors`: `enrich_error(exc)` turns a bare `--> path:line[:col]` location line that ends an error's
message into the location block with the source line under it (the block CompileError's message already has), and
`_MARKER_RE`, TileLang's name for the pattern of that line."""
from __future__ import annotations

import os
import re

from ..snippet import location_block
from ..source import Span

# The path is matched lazily so that `:line[:col]` is taken from the right: a path may hold spaces or a drive colon.
_MARKER_RE = re.compile(r"\n[ \t]*-->[ \t]+(?P<file>.+?):(?P<line>\d+)(?::(?P<col>\d+))?[ \t]*$")

__all__ = ["enrich_error"]


def enrich_error(exc: BaseException) -> BaseException:
    """The same exception, its message's trailing location line replaced by the location block with the source
    line (when the file and line exist); any other exception is returned untouched."""
    message = exc.args[0] if exc.args and isinstance(exc.args[0], str) else None
    match = _MARKER_RE.search(message) if message is not None else None
    if match is None:
        return exc
    path, line, col = match.group("file"), int(match.group("line")), int(match.group("col") or 1)
    text = _read(path)
    if text is None or line > len(text.splitlines()):
        return exc
    block = location_block(path, text, Span(line, col - 1, line, col))
    exc.args = (message[: match.start()] + "\n" + "\n".join(block), *exc.args[1:])
    return exc


def _read(path: str) -> str | None:
    try:
        if not os.path.isfile(path):
            return None
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except (OSError, ValueError):
        return None
