"""Find the kernels of a file without importing it: `@T.prim_func` functions (top level or nested in
factories), eager `@tilelang.jit` functions, and the `out_idx` their decorators or `tilelang.compile` give.

Import spellings are resolved by consteval (`import tilelang.language as T`, `from tilelang import
language as T`, `import tilelang_core as tilelang`, any alias), so decorators match by meaning, not text.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass

from ..options import pass_config_key
from .bodies import decorator_name
from .consteval import Env, Evaluator
from .known import LAUNCH_BUILTINS
from .scan import scan
from .values import BuiltinRef


@dataclass(frozen=True)
class KernelSite:
    """One kernel definition: the function, its enclosing functions (outermost first), and what we know."""

    node: ast.FunctionDef
    chain: tuple[ast.FunctionDef, ...] = ()
    eager: bool = False
    out_idx: tuple[int, ...] | None = None
    pass_configs: tuple = ()

    @property
    def factory(self) -> ast.FunctionDef | None:
        """The outermost enclosing function (for eager kernels, the kernel function itself)."""
        if self.eager:
            return self.chain[0] if self.chain else self.node
        return self.chain[0] if self.chain else None

    @property
    def factory_name(self) -> str | None:
        """The factory's name, or None for a top-level prim_func."""
        f = self.factory
        return f.name if f is not None else None


def discover(tree: ast.Module, env: Env, scanned=None) -> list[KernelSite]:
    """Every kernel in a module, in source order."""
    sites: list[KernelSite] = []
    dicts = {st.targets[0].id: st.value for st in tree.body if isinstance(st, ast.Assign) and len(st.targets) == 1
             and isinstance(st.targets[0], ast.Name) and isinstance(st.value, ast.Dict)}  # PASS_CFG = {...}
    _visit(tree.body, (), env, sites, dicts)
    if not sites:
        return []
    compiled = _compile_out_idx(scanned or scan(tree), env)
    out = []
    for s in sites:
        idx = s.out_idx
        if idx is None:
            idx = compiled.get(s.factory_name) if s.factory_name else compiled.get(s.node.name)
        out.append(KernelSite(s.node, s.chain, s.eager, idx, s.pass_configs))
    return out


def _visit(body, chain, env: Env, sites: list, dicts: dict) -> None:
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names = [decorator_name(d, env) for d in stmt.decorator_list]
            if "prim_func" in names:
                sites.append(KernelSite(stmt, chain, declares_params_in_body(stmt), _chain_out_idx(chain, env),
                                        _chain_configs(chain, env, dicts)))
            elif "jit" in names and _is_eager(stmt, env):
                sites.append(KernelSite(stmt, chain, True, _out_idx_of(stmt, env), _pass_configs_of(stmt, env, dicts)))
            elif "macro" not in names and "inline" not in names:
                _visit(stmt.body, chain + (stmt,), env, sites, dicts)
        elif isinstance(stmt, (ast.If, ast.For, ast.While, ast.With)):
            _visit(stmt.body, chain, env, sites, dicts)
            _visit(getattr(stmt, "orelse", []), chain, env, sites, dicts)
        elif isinstance(stmt, ast.Try):
            for part in (stmt.body, stmt.orelse, stmt.finalbody):
                _visit(part, chain, env, sites, dicts)


def declares_params_in_body(fn: ast.FunctionDef) -> bool:
    """TileLang's lazy style of a `@T.prim_func`: a parameter without annotation typed by a bare annotation in the
    body (`def k(A): A: T.Tensor[[M], T.float32]`), or a `return` of the T.empty outputs it makes; it is then
    parsed like an eager `@tilelang.jit` kernel."""
    a = fn.args
    bare = {arg.arg for arg in a.posonlyargs + a.args + a.kwonlyargs if arg.annotation is None}
    top = list(fn.body)
    declared = any(isinstance(st, ast.AnnAssign) and st.value is None and isinstance(st.target, ast.Name)
                   and st.target.id in bare for st in top)
    empties = any(isinstance(st, ast.Assign) and isinstance(st.value, ast.Call)
                  and isinstance(st.value.func, ast.Attribute) and st.value.func.attr == "empty" for st in top)
    return declared or empties and any(isinstance(st, ast.Return) and st.value is not None for st in top)


def _is_eager(fn: ast.FunctionDef, env: Env) -> bool:
    """An eager-style jit function: its own body opens `T.Kernel` or `T.ClusterKernel` (no nested prim_func)."""
    for node in ast.walk(fn):
        if isinstance(node, ast.FunctionDef) and node is not fn:
            if "prim_func" in [decorator_name(d, env) for d in node.decorator_list]:
                return False
    for stmt in fn.body:
        if isinstance(stmt, ast.With):
            for item in stmt.items:
                call = item.context_expr
                if isinstance(call, ast.Call):
                    v = Evaluator(env).eval(call.func)
                    if isinstance(v, BuiltinRef) and v.short in LAUNCH_BUILTINS:
                        return True
    return False


def _chain_out_idx(chain, env: Env):
    for fn in reversed(chain):
        idx = _out_idx_of(fn, env)
        if idx is not None:
            return idx
    return None


def _jit_keyword(fn: ast.FunctionDef, env: Env, name: str):
    """The expression given as keyword `name` to `fn`'s `@tilelang.jit(...)` decorator, or None."""
    for dec in fn.decorator_list:
        if isinstance(dec, ast.Call) and decorator_name(dec, env) == "jit":
            for kw in dec.keywords:
                if kw.arg == name:
                    return kw.value
    return None


def _out_idx_of(fn: ast.FunctionDef, env: Env):
    """out_idx from a `@tilelang.jit(out_idx=...)` decorator, when it is a literal."""
    node = _jit_keyword(fn, env, "out_idx")
    return literal_out_idx(Evaluator(env).eval(node)) if node is not None else None


def _chain_configs(chain, env: Env, dicts: dict) -> tuple:
    for fn in reversed(chain):
        configs = _pass_configs_of(fn, env, dicts)
        if configs:
            return configs
    return ()


def _pass_configs_of(fn: ast.FunctionDef, env: Env, dicts: dict) -> tuple:
    """The (key, value) pairs of a `@tilelang.jit(pass_configs=...)` decorator whose keys and values are known: a
    dict literal, or a module-level name bound to one (`PASS_CFG = {...}`); string keys or
    `tilelang.PassConfigKey.TL_<NAME>`, read as TileLang spells it: "tl.<name>"."""
    node = _jit_keyword(fn, env, "pass_configs")
    node = dicts.get(node.id) if isinstance(node, ast.Name) else node
    return literal_pass_configs(node, env) if isinstance(node, ast.Dict) else ()


def literal_pass_configs(node: ast.Dict, env: Env) -> tuple:
    """The known entries of a pass-config dict literal, sorted by key."""
    out = {}
    for k, v in zip(node.keys, node.values):
        key = k.value if isinstance(k, ast.Constant) else _config_key_name(k)
        value = Evaluator(env).eval(v) if key is not None else None
        if isinstance(key, str) and isinstance(value, (bool, int, float, str)):
            out[key] = value
    return tuple(sorted(out.items()))


def _config_key_name(node) -> str | None:
    """`....PassConfigKey.TL_ENABLE_FAST_MATH` → "tl.enable_fast_math" (TileLang's spelling of its keys)."""
    if isinstance(node, ast.Attribute) and node.attr.startswith("TL_") and (
            isinstance(node.value, ast.Attribute) and node.value.attr == "PassConfigKey"
            or isinstance(node.value, ast.Name) and node.value.id == "PassConfigKey"):
        return pass_config_key(node.attr)
    return None


def literal_out_idx(v):
    """Normalise an out_idx value (int or list of ints) to a tuple, or None when unknown."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return (v,)
    if isinstance(v, (list, tuple)) and all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return tuple(v)
    return None


def _compile_out_idx(scanned, env: Env) -> dict:
    """out_idx from `tilelang.compile(f, out_idx=...)` calls, keyed by the factory or kernel name."""
    out: dict = {}
    for node, _ in scanned.calls:
        f = node.func
        if not node.args or not (isinstance(f, ast.Attribute) and f.attr == "compile"
                                 or isinstance(f, ast.Name) and f.id == "compile"):
            continue
        kw = next((k for k in node.keywords if k.arg == "out_idx"), None)
        if kw is None:
            continue
        idx = literal_out_idx(Evaluator(env).eval(kw.value))
        first = node.args[0]
        name = first.func.id if isinstance(first, ast.Call) and isinstance(first.func, ast.Name) else (
            first.id if isinstance(first, ast.Name) else None)
        for key in filter(None, (name, scanned.assigned_calls.get(name or ""))):
            out.setdefault(key, idx)
    return out
