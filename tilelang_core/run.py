"""`python -m tilelang_core.run FILE [ARGS...]`: run an unmodified TileLang file with `import tilelang` aliased.

The alias (see `tilelang_core.alias`) is installed even when a real tilelang is present only if
TILELANG_CORE_ALIAS=force; FILE runs as `__main__` with `sys.argv = [FILE, *ARGS]`.
"""
from __future__ import annotations

import os
import runpy
import sys

USAGE = "usage: python -m tilelang_core.run FILE [ARGS...]"


def main(argv: list[str] | None = None) -> int:
    """Install the alias and run FILE as __main__; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not argv else sys.stdout)
        return 2 if not argv else 0
    path = argv[0]
    if not os.path.isfile(path):
        print(f"tilelang_core.run: no such file: {path}", file=sys.stderr)
        return 2
    from .alias import install_alias

    install_alias()
    sys.argv = [path, *argv[1:]]
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    runpy.run_path(path, run_name="__main__")
    return 0


if __name__ == "__main__":
    sys.exit(main())
