"""Module and factory bodies "executed" without running anything: imports, assignments, constant
`if`s and function definitions bind names in an Env; everything else is skipped.
"""
from __future__ import annotations

import ast

from .consteval import Env, Evaluator, bind_target, binop, binop_symbol
from .values import BuiltinRef, ModuleRef, Unknown, UserFunc, canonical_module, is_scalar



def import_bindings(node) -> dict:
    """Names bound by an import statement, as ModuleRef/BuiltinRef values."""
    out = {}
    if isinstance(node, ast.Import):
        for alias in node.names:
            name = canonical_module(alias.name)
            if alias.asname:
                out[alias.asname] = ModuleRef(name)
            else:
                top = name.split(".")[0]
                out[alias.name.split(".")[0]] = ModuleRef(top)
    elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
        mod = ModuleRef(canonical_module(node.module))
        for alias in node.names:
            if alias.name == "*":
                continue
            known = mod.name.startswith(("tilelang", "math", "tvm"))
            out[alias.asname or alias.name] = mod.attr(alias.name) if known else Unknown(alias.name)
    return out


def is_decorated(node, names: tuple[str, ...], env: Env) -> bool:
    """True when a function has a decorator resolving to a builtin whose short name is in `names`."""
    return any(decorator_name(d, env) in names for d in getattr(node, "decorator_list", ()))


def decorator_name(dec, env: Env) -> str | None:
    """The short builtin name a decorator resolves to ("prim_func", "jit", "macro"), or None."""
    target = dec.func if isinstance(dec, ast.Call) else dec
    v = Evaluator(env).eval(target)
    if isinstance(v, BuiltinRef):
        return v.short
    return None


def exec_block(stmts, env: Env, argparse_defaults: dict | None = None, toward=None, on_assert=None) -> Env:
    """Bind the names a block of module/factory statements defines, without running anything unsafe.

    `toward` is a node (the kernel being instantiated): an `if` whose condition is unknown then runs
    only the branch that contains it, so that branch's assignments are the ones the kernel sees.
    `on_assert(stmt)` is called for an `assert` whose condition is known to be false.
    """
    ev = Evaluator(env, argparse_defaults)
    ev.toward, ev.on_assert = toward, on_assert
    _run(stmts, env, ev)
    return env


def _run(stmts, env: Env, ev: Evaluator) -> None:
    for stmt in stmts:
        if isinstance(stmt, ast.Return):
            break
        _exec_stmt(stmt, env, ev)


def _contains(stmts, node) -> bool:
    return node is not None and any(n is node for s in stmts for n in ast.walk(s))


def _exec_stmt(stmt, env: Env, ev: Evaluator) -> None:
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        env.values.update(import_bindings(stmt))
    elif isinstance(stmt, ast.Assign):
        value = ev.eval(stmt.value)
        for target in stmt.targets:
            bind_target(target, value, env)
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        bind_target(stmt.target, ev.eval(stmt.value), env)
    elif isinstance(stmt, ast.AugAssign) and isinstance(stmt.target, ast.Name) and binop_symbol(stmt.op):
        old = ev.visit_Name(stmt.target)
        env.values[stmt.target.id] = binop(binop_symbol(stmt.op), old, ev.eval(stmt.value))
    elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
        env.values[stmt.name] = UserFunc(stmt, env, is_macro=is_decorated(stmt, ("macro", "inline"), env))
    elif isinstance(stmt, ast.If):
        _exec_if(stmt, env, ev)
    elif isinstance(stmt, ast.Try):
        _run(stmt.body, env, ev)
    elif isinstance(stmt, ast.Assert) and ev.on_assert is not None:
        cond = ev.eval(stmt.test)
        if cond is False or (is_scalar(cond) and not cond):
            ev.on_assert(stmt)
    elif isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        f = stmt.value.func
        if isinstance(f, ast.Attribute) and f.attr == "add_argument":
            ev.eval(stmt.value)


def _exec_if(stmt: ast.If, env: Env, ev: Evaluator) -> None:
    cond = ev.eval(stmt.test)
    toward = getattr(ev, "toward", None)
    if is_scalar(cond) or cond is None or isinstance(cond, (str, tuple, list)):
        _run(stmt.body if cond else stmt.orelse, env, ev)
    elif _is_main_guard(stmt.test):
        _run(stmt.body, env, ev)
    elif _contains(stmt.body, toward) or _contains(stmt.orelse, toward):
        _run(stmt.body if _contains(stmt.body, toward) else stmt.orelse, env, ev)
    else:  # unknown at compile time: names bound by either branch become visible
        _run(stmt.body, env, ev)
        _run(stmt.orelse, env, ev)


def _is_main_guard(test) -> bool:
    return isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "__name__"


def module_env(tree: ast.Module, argparse_defaults: dict | None = None) -> Env:
    """The environment of a module's top-level statements (imports, constants, functions)."""
    env = Env({"__name__": "__main__", "math": ModuleRef("math")})
    return exec_block(tree.body, env, argparse_defaults)
