"""The errors TileLang's parser raises when `@T.prim_func` runs, raised then too: the frontend's errors whose code
is of the frontend area and has a Python error in the code table (`CodeInfo.raises`), as a CompileError that is
also that error (the other areas' errors, which TileLang's lowering raises, wait for the compile)."""
from __future__ import annotations

from ..codes import CODES, python_error
from ..diagnostics import CompileError, DiagnosticSink


def check_definition(defn) -> None:
    """Parse a new PrimFuncDef; raise CompileError (a ValueError, AssertionError, ...) for its parse-time errors.
    Every other diagnostic waits for the compile, as in TileLang (a refusal of ours must not stop a definition)."""
    from ..frontend import parse_captured

    sink = DiagnosticSink()
    parse_captured(defn.captured, sink)
    errors = [d for d in sink.items if d.is_error and python_error([d.code]) is not None
              and CODES[d.code].area == "frontend"]
    if errors:
        raise CompileError(errors, defn.captured.filename)
