"""A user's kernel file run as a module (verify, autotune, Ray tasks): loading it, its reference function's name,
and which bound arguments are plain values a factory can be called with again."""
from __future__ import annotations

import os
import re
import runpy
import sys

_REF_COMMENT = re.compile(r"#\s*tilelsp:\s*reference\s*=\s*([A-Za-z_][A-Za-z0-9_]*)")
_LITERALS = (int, float, bool, str, type(None))


def reference_name(text: str) -> str:
    """The reference function's name: from a `# tilelsp: reference=NAME` comment, else `ref_program`."""
    m = _REF_COMMENT.search(text)
    return m.group(1) if m else "ref_program"


def plain_value(v) -> bool:
    """A literal (or a tuple of literals) the checker bound: a factory can be called with it again."""
    if isinstance(v, tuple):
        return all(plain_value(x) for x in v)
    return isinstance(v, _LITERALS)


def load_module(path: str) -> dict:
    """Execute the user's file as a module (not __main__) with the tilelang alias installed; its globals."""
    from ..alias import install_alias

    install_alias(force=True)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    return runpy.run_path(path, run_name="__tilelsp_verify__")
