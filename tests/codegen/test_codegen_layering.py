"""The two backends are sibling packages whose modules import one way: no cycles, and neither imports the other."""
import ast
from pathlib import Path

import pytest

CODEGEN = Path(__file__).resolve().parents[2] / "tilelang_core" / "codegen"


def _imports(package: str) -> dict[str, set[str]]:
    """Module → sibling modules it imports (top level or inside functions), for one backend package."""
    graph = {}
    for path in (CODEGEN / package).glob("*.py"):
        deps = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
                deps.add(node.module.split(".")[0])
        graph[path.stem] = deps
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}

    def visit(node, stack):
        state[node] = 1
        for dep in graph.get(node, ()):
            if state.get(dep) == 1:
                return stack + [node, dep]
            if dep not in state and (found := visit(dep, stack + [node])):
                return found
        state[node] = 2
        return None

    for node in graph:
        if node not in state and (found := visit(node, [])):
            return found
    return None


@pytest.mark.parametrize("package", ["cuda", "cpu"])
def test_backend_imports_have_no_cycle(package):
    graph = _imports(package)
    assert len(graph) > 3
    assert _cycle(graph) is None


@pytest.mark.parametrize("package, other", [("cuda", "cpu"), ("cpu", "cuda")])
def test_backends_never_import_each_other(package, other):
    for path in (CODEGEN / package).glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.level == 2:
                assert not (node.module or "").startswith(other), f"{path.name} imports codegen.{other}"


def test_the_cycle_finder_finds_a_cycle():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) is not None
    assert _cycle({"a": {"b"}, "b": set()}) is None
