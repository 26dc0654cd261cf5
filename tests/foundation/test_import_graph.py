"""The import graph of tilelang_core and tilelsp (every import, also those inside functions): layers import
downward only, no import cycle, no import of another module's private name (nor a read of one through an imported
module), passes never import codegen, runtime never imports verify. No exceptions are listed."""
from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("tilelang_core", "tilelsp")

# the ground floor: plain values every layer shares; they import only one another
GROUND = ("tilelang_core.source", "tilelang_core.snippet", "tilelang_core.severity", "tilelang_core.codes",
          "tilelang_core.diagnostics", "tilelang_core.target", "tilelang_core.options", "tilelang_core.ir")


@cache
def modules() -> dict:
    """{dotted module name: (path, is a package)} for every module of the two packages."""
    out = {}
    for pkg in PACKAGES:
        for path in (ROOT / pkg).rglob("*.py"):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_pkg = parts[-1] == "__init__"
            out[".".join(parts[:-1] if is_pkg else parts)] = (path, is_pkg)
    return out


def _targets(module: str, is_pkg: bool, node) -> list:
    """(imported module, imported name or None) of one import statement."""
    if isinstance(node, ast.Import):
        return [(a.name, None) for a in node.names]
    base = node.module or ""
    if node.level:
        here = module.split(".") if is_pkg else module.split(".")[:-1]
        here = here[:len(here) - node.level + 1]
        base = ".".join(here + ([node.module] if node.module else []))
    return [(base, a.name) for a in node.names]


def imports(module: str, is_pkg: bool, tree, mods) -> tuple:
    """(the modules of ours that `tree`, the source of `module`, imports; [(module, owner, private name)] that it
    imports or reads through an imported module: `from m import _x`, `m._x`, `pkg.m._x`)."""
    found, private, bound = set(), [], {}  # bound: a name in the module -> the module of ours it stands for
    for node in ast.walk(tree):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        for alias, (target, name) in zip(node.names, _targets(module, is_pkg, node)):
            if target.split(".")[0] not in PACKAGES:
                continue
            if isinstance(node, ast.Import):
                bound[alias.asname or target.split(".")[0]] = target if alias.asname else target.split(".")[0]
            if name and f"{target}.{name}" in mods:  # `from pkg import submodule`
                target = f"{target}.{name}"
                bound[alias.asname or name] = target
            elif name and name.startswith("_") and not name.startswith("__"):
                private.append((module, target, name))
            while target not in mods and "." in target:
                target = target.rsplit(".", 1)[0]
            if target != module:
                found.add(target)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            owner = _module_of(node.value, bound, mods)
            if owner is not None and owner != module:
                private.append((module, owner, node.attr))
    return found, private


def _module_of(expr, bound: dict, mods) -> str | None:
    """The module of ours a `name` or `name.sub.sub` expression stands for, or None."""
    if isinstance(expr, ast.Name):
        return bound.get(expr.id)
    if isinstance(expr, ast.Attribute):
        base = _module_of(expr.value, bound, mods)
        return f"{base}.{expr.attr}" if base is not None and f"{base}.{expr.attr}" in mods else None
    return None


@cache
def graph() -> tuple:
    """({module: imported modules of ours}, [(importer, module, private name)])."""
    mods, edges, private = modules(), {}, []
    for module, (path, is_pkg) in mods.items():
        edges[module], found = imports(module, is_pkg, ast.parse(path.read_text()), mods)
        private += found
    return edges, private


def _under(module: str, prefix: str) -> bool:
    return module == prefix or module.startswith(prefix + ".")


def _edges(src: str, dst: str) -> list:
    edges, _ = graph()
    return sorted((m, d) for m, ds in edges.items() if _under(m, src) for d in ds if _under(d, dst))


def test_the_graph_is_read():
    edges, _ = graph()
    assert len(edges) > 200 and "tilelang_core.target" in edges["tilelang_core.lowering"]


def test_the_ground_floor_imports_nothing_above_it():
    edges, _ = graph()
    bad = [(m, d) for m, ds in edges.items() if any(_under(m, g) for g in GROUND)
           for d in ds if not any(_under(d, g) for g in GROUND)]
    assert not bad, bad


def test_passes_never_import_codegen_and_runtime_never_imports_verify():
    assert _edges("tilelang_core.passes", "tilelang_core.codegen") == []
    assert _edges("tilelang_core.runtime", "tilelang_core.verify") == []


# (lower floor, a floor above it): the lower one never imports the upper one (docs/architecture.md, "The floors")
DOWNWARD = [("tilelang_core.frontend", "tilelang_core.passes"), ("tilelang_core.analysis", "tilelang_core.passes"),
            ("tilelang_core.passes", "tilelang_core.lowering"), ("tilelang_core.codegen", "tilelang_core.lowering"),
            ("tilelang_core.codegen", "tilelang_core.runtime"), ("tilelang_core.lowering", "tilelang_core.runtime"),
            ("tilelang_core.verify", "tilelsp"), ("tilelang_core", "tilelsp"),
            # tilelsp's rooms: features and cluster serve the command line and the server, which never import each
            # other (the command line starts the server by name)
            ("tilelsp.features", "tilelsp.cli"), ("tilelsp.features", "tilelsp.server"),
            ("tilelsp.features", "tilelsp.cluster"), ("tilelsp.cluster", "tilelsp.cli"),
            ("tilelsp.cluster", "tilelsp.server"), ("tilelsp.cluster", "tilelsp.features"),
            ("tilelsp.cli", "tilelsp.server"), ("tilelsp.server", "tilelsp.cli")]


@pytest.mark.parametrize("lower,upper", DOWNWARD, ids=[f"{a}-{b}" for a, b in DOWNWARD])
def test_floors_import_downward(lower, upper):
    assert _edges(lower, upper) == []


def test_features_hold_no_lsp_handlers():
    """tilelsp/features/ is pure functions: none takes the server object (`ls`), as every handler does."""
    handlers = []
    for module, (path, _) in modules().items():
        if _under(module, "tilelsp.features"):
            for node in ast.walk(ast.parse(path.read_text())):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    names = [a.arg for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs]
                    if "ls" in names:
                        handlers.append(f"{module}.{node.name}")
    assert len([m for m in modules() if _under(m, "tilelsp.features")]) > 10
    assert not handlers, handlers


def cycles(edges: dict) -> set:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), set(), [0]
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = set()
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.add(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    out.add(frozenset(comp))
    return out


def test_no_import_cycle():
    edges, _ = graph()
    found = sorted(sorted(c) for c in cycles(edges))
    assert not found, f"import cycles (move what both sides need down a floor, or invert one import): {found}"


def test_no_import_of_a_private_name():
    _, private = graph()
    found = sorted(set(private))
    assert not found, f"imports of another module's private names (make it public where it is owned): {found}"


def test_no_module_has_a_private_name():
    """A module other modules import is public by name (codegen/_tvm.py, imported from 19 files, is tvm_loader.py)."""
    found = sorted(m for m in modules() if m.rsplit(".", 1)[-1].startswith("_") and not m.endswith("__"))
    assert not found, f"private-named modules (give each a public name): {found}"


def test_the_cycle_finder_finds_cycles():
    edges = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a", "e"}, "e": {"d"}, "f": set()}
    assert cycles(edges) == {frozenset("abc"), frozenset("de")}


@pytest.mark.parametrize("source", [
    "from tilelang_core.frontend.consteval import _BINOPS",
    "from .consteval import Env, _BINOPS",
    "from . import consteval\nconsteval._BINOPS",
    "import tilelang_core.frontend.consteval as ce\nce._BINOPS",
    "import tilelang_core.frontend.consteval\ntilelang_core.frontend.consteval._BINOPS",
])
def test_a_private_name_is_found_however_it_is_reached(source):
    edges, private = imports("tilelang_core.frontend.parser", False, ast.parse(source), modules())
    assert private == [("tilelang_core.frontend.parser", "tilelang_core.frontend.consteval", "_BINOPS")]
    assert "tilelang_core.frontend.consteval" in edges


def test_dunders_self_and_names_of_classes_are_not_private_imports():
    source = "from . import consteval\nconsteval.__name__\nself._x\nfrom .consteval import Env\nEnv._cache"
    assert imports("tilelang_core.frontend.parser", False, ast.parse(source), modules())[1] == []
