"""`python -m tilelsp`: the same command line as the `tilelsp` script (no subcommand serves LSP on stdio)."""
from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
