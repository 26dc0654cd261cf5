"""The import graph of tilelang_core and tilelsp (every import, also those inside functions): layers import
downward only, no new import cycle, no new import of another module's private name."""
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

# Existing violations, listed so that they cannot grow: this list must only shrink (remove an entry when you fix it;
# never add one). Cycles, as the modules of each strongly connected component:
KNOWN_CYCLES = {
    # the registry reads the catalog's BUILTINS lazily and the catalog (with its builder modules) builds Builtins
    frozenset({"tilelang_core.language.catalog", "tilelang_core.language.catalog_build",
               "tilelang_core.language.catalog_intrinsics", "tilelang_core.language.registry"}),
    frozenset({"tilelang_core.frontend.constcalls", "tilelang_core.frontend.consteval",
               "tilelang_core.frontend.kernel_errors"}),
    frozenset({"tilelang_core.frontend.calls", "tilelang_core.frontend.kernel", "tilelang_core.frontend.macros",
               "tilelang_core.frontend.parser"}),
    frozenset({"tilelang_core.runtime.eager", "tilelang_core.runtime.jit"}),
}
# ... and imports of a private name (importer, module, name); this list must only shrink too.
KNOWN_PRIVATE = {
    ("tilelang_core.codegen.cuda.tma", "tilelang_core.codegen.cuda.copy", "_match"),
    ("tilelang_core.codegen.cuda.tma_store", "tilelang_core.codegen.cuda.copy", "_match"),
    ("tilelang_core.frontend.bodies", "tilelang_core.frontend.consteval", "_BINOPS"),
    ("tilelang_core.frontend.consteval", "tilelang_core.frontend.constcalls", "_SAFE_BUILTINS"),
    ("tilelang_core.frontend.consteval", "tilelang_core.frontend.constcalls", "_concrete"),
    ("tilelang_core.frontend.consteval", "tilelang_core.frontend.constcalls", "_text"),
    ("tilelang_core.frontend.consteval", "tilelang_core.frontend.constcalls", "_try"),
    ("tilelang_core.frontend.exprs", "tilelang_core.frontend.consteval", "_text"),
    ("tilelang_core.frontend.kernel_errors", "tilelang_core.frontend.consteval", "_text"),
    ("tilelang_core.frontend.parser", "tilelang_core.frontend.consteval", "_BINOPS"),
    ("tilelang_core.frontend.regions", "tilelang_core.frontend.consteval", "_text"),
}


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


@cache
def graph() -> tuple:
    """({module: imported modules of ours}, [(importer, module, private name)])."""
    mods, edges, private = modules(), {}, []
    for module, (path, is_pkg) in mods.items():
        found = edges.setdefault(module, set())
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            for target, name in _targets(module, is_pkg, node):
                if target.split(".")[0] not in PACKAGES:
                    continue
                if name and f"{target}.{name}" in mods:  # `from pkg import submodule`
                    target = f"{target}.{name}"
                elif name and name.startswith("_") and not name.startswith("__"):
                    private.append((module, target, name))
                while target not in mods and "." in target:
                    target = target.rsplit(".", 1)[0]
                if target != module:
                    found.add(target)
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


def _cycles() -> set:
    """The strongly connected components of more than one module (Tarjan's algorithm, iterative)."""
    edges, _ = graph()
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


def test_no_new_import_cycle():
    new = [sorted(c) for c in _cycles() if not any(c <= known for known in KNOWN_CYCLES)]
    assert not new, f"new import cycles: {new}"


def test_no_new_import_of_a_private_name():
    _, private = graph()
    new = sorted(set(private) - KNOWN_PRIVATE)
    assert not new, f"imports of another module's private names: {new}"
