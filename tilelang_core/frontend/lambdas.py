"""A `lambda` called in a kernel (`OPS[op](a, b)` with `OPS = {"max": lambda a, b: T.max(a, b), ...}`) as a
one-statement function the macro inliner parses: from its `ast.Lambda` (the checker), or, for a live lambda (the
JIT), from the `ast.Lambda` found in the file that defines it.

A lambda has no source of its own (inspect gives the whole line, e.g. a dict entry), so the file is parsed and the
lambda picked by its first line and parameter names; when several on that line match, by the columns its code
object's instructions come from.
"""
from __future__ import annotations

import ast
import functools
import linecache

from ..source import SourceFile
from .scope import SourceMapper


def is_lambda(pyfunc) -> bool:
    """Whether a Python function is a `lambda` expression."""
    return getattr(pyfunc, "__name__", None) == "<lambda>"


def lambda_function_def(pyfunc, filename: str) -> tuple[ast.FunctionDef, SourceMapper] | None:
    """The lambda's body as `def <lambda>(params): return body` (spans in `filename`) and the mapper of that file,
    or None when the lambda cannot be told apart in its file."""
    parsed = _parsed("".join(linecache.getlines(filename)), filename)
    if parsed is None:
        return None
    tree, mapper = parsed
    code = pyfunc.__code__
    names = list(code.co_varnames[:code.co_argcount + code.co_kwonlyargcount])
    found = [n for n in ast.walk(tree) if isinstance(n, ast.Lambda) and n.lineno == code.co_firstlineno
             and [a.arg for a in n.args.posonlyargs + n.args.args + n.args.kwonlyargs] == names]
    if len(found) > 1:
        cols = {(line, col) for line, _, col, _ in code.co_positions() if line is not None and col is not None}
        found = [n for n in found if any(_inside(n.body, pos) for pos in cols)]
    if len(found) != 1:
        return None
    return function_def(found[0]), mapper


def function_def(lam: ast.Lambda) -> ast.FunctionDef:
    """`lambda params: body` as `def <lambda>(params): return body`, at the lambda's position."""
    ret = ast.copy_location(ast.Return(lam.body), lam.body)
    return ast.copy_location(ast.FunctionDef(name="<lambda>", args=lam.args, body=[ret], decorator_list=[],
                                             returns=None, type_params=[]), lam)


def _inside(node: ast.AST, pos: tuple[int, int]) -> bool:
    """Whether (line, column) lies within `node`'s source span."""
    return (node.lineno, node.col_offset) <= pos < (node.end_lineno, node.end_col_offset)


@functools.lru_cache(maxsize=32)
def _parsed(text: str, filename: str):
    try:
        return ast.parse(text), SourceMapper(SourceFile(text, filename))
    except SyntaxError:
        return None
