"""Kernel instances: which factory arguments to check, from call sites, `# tilelsp:` comments and defaults.

Priority: the caller's `instances` mapping, then `# tilelsp: f(k=v, ...)` comments for that factory,
then call sites anywhere in the file whose arguments evaluate (unknown arguments are left out so the
parameter falls back to its default, or becomes symbolic); a factory with none of these gets one
instance from its defaults. Distinct instances are kept, at most `MAX_INSTANCES`.
"""
from __future__ import annotations

import ast
import re

from ..ir import nodes as N
from .bodies import exec_block
from .consteval import Env, Evaluator, is_known
from .values import DType, EnumValue, Unknown, from_live

MAX_INSTANCES = 8
_COMMENT = re.compile(r"#\s*tilelsp:\s*([A-Za-z_]\w*\s*\(.*\))")


def param_names(fn: ast.FunctionDef) -> list[str]:
    """Positional and keyword-only parameter names of a function, in order."""
    a = fn.args
    return [p.arg for p in a.posonlyargs + a.args + a.kwonlyargs]


def collect(scanned, text: str, env: Env, factories: dict, overrides: dict | None,
            argparse_defaults: dict, report=None) -> dict[str, list[dict]]:
    """Instance keyword dicts for every factory name in `factories` (name -> FunctionDef)."""
    found: dict[str, list[dict]] = {name: [] for name in factories}
    if not factories:
        return found
    comments = _from_comments(text, env, factories, report)
    calls = _from_calls(scanned, env, factories, argparse_defaults, report)
    for name in factories:
        if overrides and name in overrides:
            candidates = [{k: from_live(v) for k, v in d.items()} for d in overrides[name]]
        else:
            candidates = comments.get(name) or calls.get(name) or [{}]
        found[name] = _dedupe(candidates)
    return found


def _dedupe(dicts: list[dict]) -> list[dict]:
    seen, out = set(), []
    for d in dicts:
        key = tuple(sorted((k, repr(v)) for k, v in d.items()))
        if key not in seen:
            seen.add(key)
            out.append(d)
        if len(out) >= MAX_INSTANCES:
            break
    return out


def _from_comments(text: str, env: Env, factories: dict, report=None) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    if "tilelsp:" not in text:
        return out
    for line in text.splitlines():
        m = _COMMENT.search(line)
        if not m:
            continue
        call = _comment_call(m.group(1))
        if call is None:
            continue
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id in factories:
            kw = _bind_call(call, factories[call.func.id], Evaluator(env), None)
            out.setdefault(call.func.id, []).append(kw)
    return out


def _comment_call(text: str):
    """The call expression at the start of a `# tilelsp:` comment (text after it, e.g. a remark, is ignored)."""
    end = len(text)
    while end > 0:
        try:
            return ast.parse(text[:end].strip(), mode="eval").body
        except SyntaxError:
            end = text.rfind(")", 0, end - 1) + 1
    return None


def _from_calls(scanned, env: Env, factories: dict, argparse_defaults: dict, report=None) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    scope_envs: dict = {}
    for call, scope in scanned.calls:
        name = _callee(call, factories)
        if name is None or factories[name] in scope:
            continue
        key = tuple(id(f) for f in scope)
        if key not in scope_envs:
            scope_envs[key] = _scope_env(scope, env, argparse_defaults, scanned)
        kw = _bind_call(call, factories[name], Evaluator(scope_envs[key], argparse_defaults), report)
        if kw:
            out.setdefault(name, []).append(kw)
    return out


def _callee(call: ast.Call, factories: dict) -> str | None:
    f = call.func
    if isinstance(f, ast.Name) and f.id in factories:
        return f.id
    if isinstance(f, ast.Attribute) and f.attr == "compile" and isinstance(f.value, ast.Name) and f.value.id in factories:
        return f.value.id
    return None


def _scope_env(scope, env: Env, argparse_defaults: dict, scanned=None) -> Env:
    """The environment inside a chain of functions: parameters bound to what a module-level call passes
    (e.g. `main(args)` under `if __name__ == "__main__":`), else to defaults, then simple statements."""
    for depth, fn in enumerate(scope):
        ev = Evaluator(env, argparse_defaults)
        given = _module_call_args(fn, scanned, env, argparse_defaults) if depth == 0 and scanned else {}
        params = bind_params(fn, ev, given, unknown=lambda n: Unknown(n))
        env = exec_block(fn.body, env.child(params), argparse_defaults)
    return env


def _module_call_args(fn: ast.FunctionDef, scanned, env: Env, argparse_defaults: dict) -> dict:
    """The known arguments of the first module-level call of a top-level function."""
    for call, scope in scanned.calls:
        if not scope and isinstance(call.func, ast.Name) and call.func.id == fn.name:
            return _bind_call(call, fn, Evaluator(env, argparse_defaults), None)
    return {}


def bind_params(fn: ast.FunctionDef, ev: Evaluator, kwargs: dict, unknown) -> dict:
    """Parameter values: given kwargs, else defaults (evaluated by `ev`), else `unknown(name)`."""
    a = fn.args
    positional = a.posonlyargs + a.args
    defaults = [None] * (len(positional) - len(a.defaults)) + list(a.defaults)
    out = {}
    for p, d in list(zip(positional, defaults)) + list(zip(a.kwonlyargs, a.kw_defaults)):
        if p.arg in kwargs:
            out[p.arg] = kwargs[p.arg]
        elif d is not None:
            v = ev.eval(d)
            out[p.arg] = unknown(p.arg) if isinstance(v, Unknown) else v
        else:
            out[p.arg] = unknown(p.arg)
    if a.vararg:
        out[a.vararg.arg] = ()
    if a.kwarg:
        out[a.kwarg.arg] = {}
    return out


def _bind_call(call: ast.Call, fn: ast.FunctionDef, ev: Evaluator, report) -> dict:
    """The known keyword values a call passes to `fn` (positional args mapped by position).

    With `report(message, node)`, calls that cannot work are reported (instance-error).
    """
    args, kwargs = ev.call_args(call)
    names = [p.arg for p in fn.args.posonlyargs + fn.args.args]
    out = {}
    for name, v in list(zip(names, args)) + list(kwargs.items()):
        if is_known(v):
            out[name] = v
        elif report and isinstance(v, Unknown) and v.error:
            report(f"the argument `{name}` of `{fn.name}` cannot be evaluated ({v.error}); fix the call or add a "
                   f"`# tilelsp: {fn.name}(...)` comment", call)
    if report:
        _check_call_shape(call, fn, args, report)
    return out


def _check_call_shape(call: ast.Call, fn: ast.FunctionDef, args: list, report) -> None:
    a = fn.args
    positional = a.posonlyargs + a.args
    if len(args) > len(positional) and not a.vararg and not any(isinstance(x, ast.Starred) for x in call.args):
        report(f"`{fn.name}` takes {len(positional)} positional argument{'s' if len(positional) != 1 else ''} "
               f"but this call passes {len(args)}", call)
    is_compile = isinstance(call.func, ast.Attribute)  # f.compile(M=...) also binds eager T.const dims
    names = {p.arg for p in positional + a.kwonlyargs}
    for kw in call.keywords:
        if kw.arg and kw.arg not in names and not a.kwarg and not is_compile:
            report(f"`{fn.name}` has no parameter `{kw.arg}`; its parameters are {', '.join(sorted(names))}", kw)


def fmt_value(v) -> str:
    """A short readable rendering of a binding value for instance labels."""
    if isinstance(v, DType):
        return repr(str(v))
    if isinstance(v, N.Var):
        return "?"
    if isinstance(v, EnumValue):
        return f"{v.enum}.{v.member}"
    if isinstance(v, (int, float, str, bool, tuple, list)) or v is None:
        return repr(v)
    return type(v).__name__


def label(factory: str, fn: ast.FunctionDef, explicit: dict, bound: dict) -> str:
    """A readable instance label: explicit arguments in parameter order, unknown ones as `?`."""
    parts = []
    order = param_names(fn) + [k for k in explicit if k not in param_names(fn)]
    for name in order:
        if name in explicit:
            parts.append(f"{name}={fmt_value(explicit[name])}")
        elif isinstance(bound.get(name), N.Var) and bound[name].kind == "symbolic":
            parts.append(f"{name}=?")
    return f"{factory}({', '.join(parts)})"
