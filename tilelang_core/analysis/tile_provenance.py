"""Where each tile index comes from, read from the source: a block or loop variable counts tiles of one size
(`T.Kernel(T.ceildiv(N, block_N), ...) as (bx, ...)`, `for k in T.Pipelined(T.ceildiv(K, block_K))`), so an
offset that scales it by another tile size (`bx * block_M`) is in bounds only while the two sizes agree. Warnings
(`tile-index-mismatch`): at the odd use when the variable's uses disagree, at the loop or launch when every use
agrees on another size than the one it counts."""
from __future__ import annotations

import ast
import re

from ..diagnostics import Diagnostic, Related, Severity
from ..source import Span

LOOPS = ("Pipelined", "serial", "Serial", "range")
TILE_NAME = re.compile(r"^(block|blk|tile)_?[A-Za-z0-9]*$|^b[mnk]$", re.IGNORECASE)  # what a tile size is called


def prim_funcs(text: str) -> list[ast.FunctionDef]:
    """The @T.prim_func function definitions of a file's text (none when it does not parse)."""
    if "prim_func" not in text:
        return []
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # MemoryError: Python's parser on deep nesting
        return []
    return [fn for fn in ast.walk(tree)
            if isinstance(fn, ast.FunctionDef) and any(is_prim_func(d) for d in fn.decorator_list)]


def tile_index_warnings(text: str, fns: list | None = None) -> list[Diagnostic]:
    """The tile-index-mismatch warnings of a file's @T.prim_func kernels (`fns`: its `prim_funcs`, when known)."""
    out: list[Diagnostic] = []
    for fn in prim_funcs(text) if fns is None else fns:
        out += _kernel_warnings(fn)
    return out


def _kernel_warnings(fn: ast.FunctionDef) -> list[Diagnostic]:
    counts = _counted(fn)  # variable -> (what it tiles, the tile sizes' names, the node that declares it)
    if not counts:
        return []
    uses: dict[str, list] = {}  # variable -> [(the tile sizes it is scaled by, node)]
    tiles = {t for _, ts, _ in counts.values() for t in ts}
    products = [n for n in ast.walk(fn) if isinstance(n, ast.BinOp) and isinstance(n.op, ast.Mult)]
    inner = {id(c) for n in products for c in (n.left, n.right)}
    seen: set = set()  # a product inside nested subscripts is counted once
    for node in ast.walk(fn):
        for expr in _offsets(node):
            for var, tile, at in _scaled(expr, counts, tiles, inner):
                if id(at) not in seen:
                    seen.add(id(at))
                    uses.setdefault(var, []).append((tile, at))
    out = []
    for var, found in uses.items():
        dim, tiles, decl = counts[var]
        odd = [(t, at) for t, at in found if not t & tiles]
        if not odd:
            continue
        tile = " * ".join(sorted(tiles))
        sizes = {t for t, _ in found}
        if len(sizes) == 1:  # every offset agrees on another size: the count is what is wrong
            other = " * ".join(sorted(odd[0][0]))
            msg = (f"`{var}` counts tiles of {tile} (T.ceildiv({dim}, {tile})) but every offset built from it "
                   f"steps by {other}: the loop covers {dim} only while {tile} == {other}; count with "
                   f"T.ceildiv({dim}, {other})")
            out.append(_warn(msg, decl, [(at, f"`{var}` steps by {other} here") for _, at in odd[:3]]))
            continue
        for other, at in odd[:1]:
            other = " * ".join(sorted(other))
            msg = (f"`{var}` counts tiles of {tile} (T.ceildiv({dim}, {tile})) but is scaled by {other} here, "
                   f"while its other offsets use {tile}: this is right only while {tile} == {other}; scale it by "
                   f"{tile}, or index with the variable that counts {other} tiles")
            out.append(_warn(msg, at, [(decl, f"`{var}` is declared here")]))
    return out


def _counted(fn: ast.FunctionDef) -> dict:
    """Block and loop variables whose extent is T.ceildiv(D, t) or D // t (directly, or through a name assigned
    once in the kernel), with (D, t) as written."""
    assigned: dict = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
            assigned[name] = None if name in assigned else node.value  # assigned twice: not one value
    out = {}
    for node in ast.walk(fn):
        if isinstance(node, ast.With):
            for item in node.items:
                call = item.context_expr
                if isinstance(call, ast.Call) and attr_name(call.func) == "Kernel" and item.optional_vars is not None:
                    names = target_names(item.optional_vars)
                    for name, extent in zip(names, call.args):
                        tiled = _tiled(extent, assigned)
                        if name and tiled:
                            out[name] = (*tiled, node)
        elif isinstance(node, ast.For) and isinstance(node.target, ast.Name) and isinstance(node.iter, ast.Call):
            if attr_name(node.iter.func) in LOOPS and node.iter.args:
                tiled = _tiled(node.iter.args[0], assigned)
                if tiled:
                    out[node.target.id] = (*tiled, node)
    return out


def _tiled(e, assigned: dict) -> tuple[str, frozenset] | None:
    """(what is tiled, the names of the tile sizes) of an extent T.ceildiv(D, t), D // t or D // t1 // t2; a name
    assigned once is followed, and both branches of a conditional must agree on the tile size."""
    if isinstance(e, ast.Name) and assigned.get(e.id) is not None:
        return _tiled(assigned[e.id], {k: v for k, v in assigned.items() if k != e.id})
    if isinstance(e, ast.IfExp):
        a, b = _tiled(e.body, assigned), _tiled(e.orelse, assigned)
        return a if a is not None and b is not None and a[1] == b[1] else None
    if isinstance(e, ast.Call) and attr_name(e.func) == "ceildiv" and len(e.args) == 2:
        a, b = e.args
    elif isinstance(e, ast.BinOp) and isinstance(e.op, ast.FloorDiv):
        a, b = e.left, e.right
    else:
        return None
    if not isinstance(b, ast.Name):
        return None
    inner = _tiled(a, assigned) if isinstance(a, ast.BinOp) and isinstance(a.op, ast.FloorDiv) else None
    if inner is not None:  # D // t1 // t2: tiles of t1 * t2
        return inner[0], inner[1] | {b.id}
    return ast.unparse(a), frozenset({b.id})


def _offsets(node) -> list:
    """The index expressions of a subscript (slice starts included) and the operands of a comparison."""
    if isinstance(node, ast.Subscript):
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        return [p.lower if isinstance(p, ast.Slice) else p for p in parts if p is not None]
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    return []


def _scaled(expr, counts: dict, tiles: set, inner: set) -> list:
    """(variable, tile sizes, node) for each product `var * size [* ...]` in `expr` (a maximal one: not inside
    another, per `inner`) of a counted variable and tile sizes (names some counted variable counts in, or named
    like one)."""
    if expr is None:
        return []
    out = []
    for node in ast.walk(expr):
        if not isinstance(node, ast.BinOp) or not isinstance(node.op, ast.Mult) or id(node) in inner:
            continue
        factors = [f.id for f in _factors(node) if isinstance(f, ast.Name)]
        sizes = frozenset(f for f in factors if f in tiles or TILE_NAME.match(f))
        for var in (f for f in factors if f in counts and f not in sizes):
            if sizes:
                out.append((var, sizes, node))
    return out


def _factors(node) -> list:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult):
        return _factors(node.left) + _factors(node.right)
    return [node]


def _warn(msg: str, at, related: list) -> Diagnostic:
    return Diagnostic("tile-index-mismatch", Severity.WARNING, msg, node_span(at),
                      tuple(Related(node_span(n), text) for n, text in related))


def node_span(node) -> Span:
    """The span of an AST node (a `with` or `for` statement: its header line only)."""
    if isinstance(node, (ast.With, ast.For)):  # the header line, not the whole body
        end = node.items[-1].context_expr if isinstance(node, ast.With) else node.iter
        return Span(node.lineno, node.col_offset, end.end_lineno, end.end_col_offset)
    return Span(node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)


def target_names(target) -> list:
    """The names a `with ... as` / `for` target binds (None for a part that is not a plain name)."""
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [e.id if isinstance(e, ast.Name) else None for e in target.elts]
    return []


def attr_name(f) -> str:
    """The called name of `T.name` / `name` (empty for anything else)."""
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def is_prim_func(d) -> bool:
    """True for a `@T.prim_func` (or `@T.prim_func(...)`) decorator."""
    return attr_name(d.func if isinstance(d, ast.Call) else d) == "prim_func"
