"""The errors TileLang's parser raises when `@T.prim_func` runs, raised then too: the frontend's errors whose code
has a Python error in the code table (`CodeInfo.raises`) and is one of its parser's (`codes.raised_at_definition`),
as a CompileError that is also that error; the others wait for the compile, as TileLang's lowering raises them."""
from __future__ import annotations

from ..codes import raised_at_definition
from ..diagnostics import CompileError, DiagnosticSink


def check_definition(defn) -> None:
    """Parse a new PrimFuncDef; raise CompileError (a ValueError, AssertionError, ...) for its parse-time errors.
    Every other diagnostic waits for the compile, as in TileLang (a refusal of ours must not stop a definition)."""
    from ..frontend import parse_captured

    sink = DiagnosticSink()
    parse_captured(defn.captured, sink)
    errors = [d for d in sink.items if d.is_error and raised_at_definition(d.code)]
    if errors:
        raise CompileError(errors, defn.captured.filename)
