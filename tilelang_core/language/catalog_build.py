"""Building catalog entries: a builtin from `(name, kind[, default])` parameter triples, with its hover and
parameter docs attached by name."""
from __future__ import annotations

from .catalog_docs import DOCS
from .catalog_param_docs import PARAM_DOCS
from .builtin import REQUIRED, Builtin, Param

KW = object()  # marker: the parameters after it are keyword-only


def params(*spec, docs: dict) -> tuple[Param, ...]:
    """Build a parameter tuple from `(name, kind[, default])` triples, `"*name"` varargs and `KW` markers."""
    out, kw_only = [], False
    for item in spec:
        if item is KW:
            kw_only = True
            continue
        name, kind, *rest = item
        default = rest[0] if rest else REQUIRED
        if name.startswith("*"):
            out.append(Param(name[1:], kind, doc=docs.get(name[1:], ""), variadic=True))
            kw_only = True
        else:
            out.append(Param(name, kind, default, doc=docs.get(name, ""), keyword_only=kw_only))
    return tuple(out)


def entry(name, category, *spec, returns="", kind="function", aliases=()) -> Builtin:
    """One catalog entry; its doc comes from DOCS, its parameters' docs from PARAM_DOCS."""
    return Builtin(name, category, params(*spec, docs=PARAM_DOCS.get(name, {})), doc=DOCS.get(name, ""),
                   returns=returns, kind=kind, aliases=tuple(aliases))
