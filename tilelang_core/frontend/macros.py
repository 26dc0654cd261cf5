"""Inlining of `@T.macro` helpers (and plain helper functions) at their call site, with the arguments
substituted for the parameters; a live `MacroDef` from the JIT is parsed from its captured source.
"""
from __future__ import annotations

import ast
import weakref

from ..ir import nodes as N
from ..language.types import MacroDef
from ..source import SourceFile
from .consteval import Env
from .kernel_errors import KernelError
from .lambdas import is_lambda, lambda_function_def
from .scope import SourceMapper
from .values import LiveFunc, Unknown, UserFunc, from_live

_LIVE_HELPERS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()  # Python function -> its UserFunc
MAX_MACRO_DEPTH = 16  # nested inlinings: deeper is taken for recursion, which kernels cannot have


def inline(p, func, node: ast.Call):
    """Parse the helper's body in a scope binding its parameters to the call's arguments."""
    if isinstance(func, LiveFunc):
        value = _trace_time_call(p, func, node)
        if value is not _NOT_CALLED:
            return value
    uf = _user_func(func)
    if uf is None:
        raise KernelError("bad-arguments", f"cannot inline `{ast.unparse(node.func)}`", node)
    if p.macro_depth >= MAX_MACRO_DEPTH:
        raise KernelError("unsupported-syntax", f"macro `{uf.name}` calls itself too deeply (recursion is not "
                          "supported in kernels)", node)
    values = _bind_args(p, uf.node, node, uf.env)
    saved = (p.env, p.ctx.mapper, p.returned, p.return_value)
    p.env = Env(values, uf.env)
    p.ctx.mapper = uf.source or p.ctx.mapper
    p.macro_depth += 1
    p.returned, p.return_value = False, None
    quiet = not uf.is_macro  # a plain Python helper: inlined when it works, otherwise an unknown value
    p.quiet += quiet
    errors_before = p.quiet_errors
    try:
        stmts = p.block(uf.node.body)
        result = p.return_value
    finally:
        p.macro_depth -= 1
        p.quiet -= quiet
        p.env, p.ctx.mapper, p.returned, p.return_value = saved
    if quiet and p.quiet_errors != errors_before:
        return Unknown(uf.name)
    p.pending.extend(stmts)
    return result


_NOT_CALLED = object()


def _trace_time_call(p, func: LiveFunc, node: ast.Call):
    """A running program's helper called on plain Python values (e.g. `is_hopper = check_hopper()`) runs as
    Python, as TileLang runs it while tracing; a helper given kernel values, or whose result is not a plain
    value, is inlined instead (_NOT_CALLED)."""
    simple = (ast.Constant, ast.Name, ast.Attribute)
    if not all(isinstance(a, simple) for a in node.args) or \
            not all(k.arg and isinstance(k.value, simple) for k in node.keywords):
        return _NOT_CALLED
    args = [p.ev.eval(a) for a in node.args]
    kwargs = {k.arg: p.ev.eval(k.value) for k in node.keywords}
    if not all(isinstance(v, (bool, int, float, str)) or v is None for v in [*args, *kwargs.values()]):
        return _NOT_CALLED
    try:
        result = func.pyfunc(*args, **kwargs)
    except Exception:  # noqa: BLE001  (user code: whatever it raises, the inlined body is the fallback)
        return _NOT_CALLED
    value = from_live(result)
    return _NOT_CALLED if isinstance(value, (Unknown, LiveFunc)) else value


def _user_func(func) -> UserFunc | None:
    if isinstance(func, UserFunc):
        return func
    if isinstance(func, MacroDef):
        cap = func.captured
        cached = getattr(cap, "_tilelsp_userfunc", None)
        if cached is not None:
            return cached
        uf = _captured_user_func(cap, True)
        try:
            cap._tilelsp_userfunc = uf
        except AttributeError:
            pass
        return uf
    if isinstance(func, LiveFunc):
        if func.pyfunc not in _LIVE_HELPERS:
            from ..language.capture import capture

            try:
                cap = capture(func.pyfunc)
                _LIVE_HELPERS[func.pyfunc] = _lambda_user_func(cap) if is_lambda(cap.pyfunc) else \
                    _captured_user_func(cap, False)
            except (OSError, SyntaxError):
                _LIVE_HELPERS[func.pyfunc] = None
        return _LIVE_HELPERS[func.pyfunc]
    return None


def _captured_user_func(cap, is_macro: bool) -> UserFunc | None:
    """A UserFunc parsed from a captured function's source, its spans in the file that defines it (a lambda is
    _lambda_user_func's)."""
    tree = ast.parse(cap.source)
    fn = next((s for s in tree.body if isinstance(s, ast.FunctionDef)), None)
    if fn is None:
        return None
    mapper = SourceMapper(SourceFile(cap.source, cap.filename), cap.first_line - 1, cap.indent)
    env = Env({k: from_live(v) for k, v in cap.env.items()})
    return UserFunc(fn, env, is_macro, mapper)


def _lambda_user_func(cap) -> UserFunc | None:
    """A UserFunc of a live lambda: its expression returned by a one-statement function (lambdas.py)."""
    found = lambda_function_def(cap.pyfunc, cap.filename)
    if found is None:
        return None
    fn, mapper = found
    return UserFunc(fn, Env({k: from_live(v) for k, v in cap.env.items()}), False, mapper)


def _bind_args(p, fn: ast.FunctionDef, call: ast.Call, uf_env) -> dict:
    """Map call arguments onto the helper's parameters (regions stay regions, buffers stay buffers)."""
    a = fn.args
    positional = a.posonlyargs + a.args
    values: dict = {}
    args = []
    for x in call.args:
        if isinstance(x, ast.Starred):
            v = p.ev.eval(x.value)
            args.extend(v if isinstance(v, (tuple, list)) else [v])
        else:
            args.append(_arg_value(p, x))
    if len(args) > len(positional) and not a.vararg:
        raise KernelError("bad-arguments", f"`{fn.name}` takes {len(positional)} positional arguments but "
                          f"{len(args)} were given", call)
    for prm, v in zip(positional, args):
        values[prm.arg] = v
    if a.vararg:
        values[a.vararg.arg] = tuple(args[len(positional):])
    names = {x.arg for x in positional + a.kwonlyargs}
    for kw in call.keywords:
        if kw.arg is None:
            continue
        if kw.arg not in names:
            raise KernelError("bad-arguments", f"`{fn.name}` has no parameter `{kw.arg}`", kw.value)
        values[kw.arg] = _arg_value(p, kw.value)
    _defaults(uf_env, fn, values, call)
    return values


def _defaults(env, fn, values, call) -> None:
    from .consteval import Evaluator

    a = fn.args
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    for prm, d in list(zip(positional, defaults)) + list(zip(a.kwonlyargs, a.kw_defaults)):
        if prm.arg in values:
            continue
        if d is None:
            raise KernelError("bad-arguments", f"`{fn.name}` is missing the argument `{prm.arg}`", call)
        values[prm.arg] = Evaluator(env).eval(d)


def _arg_value(p, node):
    """An argument's value; a sliced buffer subscript is kept as a Region for tile ops in the helper."""
    if isinstance(node, ast.Subscript):
        base = p.ev.eval(node.value)
        if isinstance(base, N.Buffer):
            idx = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            if any(isinstance(i, ast.Slice) for i in idx):
                from .regions import region_of

                return region_of(p, node)
    return p.ev.eval(node)
