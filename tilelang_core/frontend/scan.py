"""One pass over a module's ast collecting what instance discovery needs: every call with the chain
of functions around it, and which names are assigned the result of which call."""
from __future__ import annotations

import ast
from dataclasses import dataclass, field


_LEAVES = frozenset(t for base in (ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop)
                    for t in base.__subclasses__()) | {ast.Constant, ast.Name, ast.alias, ast.arg}


@dataclass
class ModuleScan:
    """Calls (node, enclosing functions outermost first) and `name = f(...)` assignments."""

    calls: list = field(default_factory=list)
    assigned_calls: dict = field(default_factory=dict)


def scan(tree: ast.Module) -> ModuleScan:
    """Walk the module once."""
    out = ModuleScan()
    stack = [(tree, ())]
    while stack:
        node, scope = stack.pop()
        if isinstance(node, ast.Call):
            out.calls.append((node, scope))
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    out.assigned_calls[t.id] = node.value.func.id
        inner = scope + (node,) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) else scope
        decorators = getattr(node, "decorator_list", ())
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for child in value:
                    if isinstance(child, ast.AST) and type(child) not in _LEAVES:
                        stack.append((child, scope if child in decorators else inner))
            elif isinstance(value, ast.AST) and type(value) not in _LEAVES:
                stack.append((value, inner))
    out.calls.reverse()
    return out
