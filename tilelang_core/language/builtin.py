"""One TileLang builtin as the catalog describes it (`Builtin`, with its `Param`s), and the binding of a call's
arguments to its parameters (`bind`), which the frontend, hover, completion and signature help share.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field

REQUIRED = object()  # the default of a parameter that has none

# Argument kinds the frontend understands:
#   buffer  - a Buffer (whole) ;  region - a Buffer, a slice A[a:b, :] or a head address A[i, j]
#   shape   - a tuple/list of extents (or a single extent) ; dtype - T.float16 / "float16"
#   int     - a compile-time int ; expr - any scalar expression ; bool ; str ; layout_map ; any
#   varargs - *args of exprs (T.Kernel grid, T.Parallel extents)


@dataclass(frozen=True)
class Param:
    """One parameter of a builtin."""

    name: str
    kind: str = "expr"
    default: object = REQUIRED
    doc: str = ""
    variadic: bool = False
    keyword_only: bool = False

    @property
    def required(self) -> bool:
        """True when the parameter has no default and is not variadic."""
        return self.default is REQUIRED and not self.variadic


@dataclass(frozen=True)
class Builtin:
    """One TileLang construct as the user writes it (`T.copy`, `tilelang.jit`, `T.float16`)."""

    name: str  # fully qualified as written with the usual alias: "T.copy", "tilelang.jit"
    category: str  # kernel | memory | loop | tile-op | math | type | layout | jit | misc
    params: tuple[Param, ...] = ()
    doc: str = ""
    returns: str = ""
    kind: str = "function"  # function | decorator | context | iterator | type | dtype | constant | enum
    aliases: tuple[str, ...] = field(default=())

    @property
    def short_name(self) -> str:
        """The name without its module prefix ("copy" for "T.copy")."""
        return self.name.split(".", 1)[1] if "." in self.name else self.name

    @property
    def signature(self) -> str:
        """A Python-style signature line for hover and signature help."""
        parts, star_done = [], False
        for p in self.params:
            if p.variadic:
                parts.append(f"*{p.name}")
                star_done = True
                continue
            if p.keyword_only and not star_done:
                parts.append("*")
                star_done = True
            parts.append(p.name if p.required else f"{p.name}={_fmt_default(p.default)}")
        sig = f"{self.name}({', '.join(parts)})"
        return f"{sig} -> {self.returns}" if self.returns else sig


def _fmt_default(v) -> str:
    return repr(v) if not isinstance(v, str) or not v.startswith("T.") else v


class BindError(Exception):
    """Arguments that do not fit a builtin's parameters; `message` says which and how to fix."""


def bind(builtin: Builtin, args: list, kwargs: dict) -> dict:
    """Map positional and keyword arguments (opaque values) to parameter names; defaults filled in.

    Variadic parameters receive a list. Raises BindError naming the builtin and the problem.
    """
    out: dict = {}
    positional = [p for p in builtin.params if not p.keyword_only]
    args = list(args)
    for p in positional:
        if p.variadic:
            out[p.name] = args
            args = []
            break
        if args:
            out[p.name] = args.pop(0)
    if args:
        raise BindError(f"{builtin.name} takes at most {len([p for p in positional if not p.variadic])} "
                        f"positional arguments but {len(args) + len(out)} were given; see `{builtin.signature}`")
    names = {p.name for p in builtin.params}
    for k, v in kwargs.items():
        if k not in names:
            close = difflib.get_close_matches(k, sorted(names), n=1)
            hint = f" (did you mean {close[0]!r}?)" if close else ""
            raise BindError(f"{builtin.name} has no parameter {k!r}{hint}; see `{builtin.signature}`")
        if k in out:
            raise BindError(f"{builtin.name} got two values for {k!r}")
        out[k] = v
    for p in builtin.params:
        if p.name in out:
            continue
        if p.variadic:
            out[p.name] = []
        elif p.required:
            raise BindError(f"{builtin.name} is missing the argument {p.name!r}; see `{builtin.signature}`")
        else:
            out[p.name] = p.default
    return out
