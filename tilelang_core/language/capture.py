"""Capture of a live Python function for the JIT path: its source text, location and the values it sees.

`T.prim_func` and `T.macro` (when a file is *run*, not just checked) return a `CapturedFunc`; the
frontend parses its source with `env` as the constant environment, so the same parser serves the
static checker and the JIT.
"""
from __future__ import annotations

import inspect
import textwrap
from dataclasses import dataclass, field


@dataclass
class CapturedFunc:
    """A function's dedented source plus where it came from and the names visible to it."""

    pyfunc: object
    source: str = field(repr=False)
    filename: str
    first_line: int  # 1-based line of the first source line (decorators included) in `filename`
    indent: int  # columns removed by dedenting
    env: dict = field(default_factory=dict, repr=False)  # printing a kernel must not dump its globals

    @property
    def name(self) -> str:
        """The function's name."""
        return getattr(self.pyfunc, "__name__", "<kernel>")


def capture(pyfunc) -> CapturedFunc:
    """Capture `pyfunc` (source via inspect, env = globals + closure cells + builtins)."""
    try:
        lines, first_line = inspect.getsourcelines(pyfunc)
    except (OSError, TypeError) as exc:
        raise OSError(
            f"cannot read the source of {getattr(pyfunc, '__qualname__', pyfunc)!r}: TileLang kernels must be "
            "defined in a file (not in exec'd strings or the interactive prompt)"
        ) from exc
    raw = "".join(lines)
    source = textwrap.dedent(raw)
    indent = len(lines[0]) - len(lines[0].lstrip()) if lines else 0
    env = dict(getattr(pyfunc, "__globals__", {}))
    closure = getattr(pyfunc, "__closure__", None) or ()
    for name, cell in zip(pyfunc.__code__.co_freevars, closure):
        try:
            env[name] = cell.cell_contents
        except ValueError:  # empty cell: name assigned later in the enclosing scope
            pass
    _add_defining_locals(pyfunc, env)
    return CapturedFunc(pyfunc, source, inspect.getsourcefile(pyfunc) or "<unknown>", first_line, indent, env)


def _add_defining_locals(pyfunc, env: dict) -> None:
    """Add the locals of the frame that is defining `pyfunc` (names used only in annotations, e.g. `dtype`
    in `A: T.Tensor((M, N), dtype)`, are not closure cells); they shadow module globals, as in Python."""
    code = getattr(pyfunc, "__code__", None)
    frame = inspect.currentframe()
    try:
        while frame is not None and code is not None:
            if code in frame.f_code.co_consts:
                for name, value in frame.f_locals.items():
                    env[name] = value
                return
            frame = frame.f_back
    finally:
        del frame
