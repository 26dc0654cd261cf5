"""Where the same tensor or tile is indexed two ways, read from the source: a block index, a serial loop's counter
or a T.Parallel variable over one extent indexes one axis of a tensor (or tile) in some places and another axis,
of another dimension as written, elsewhere (`A[by * bm + i, k]` and `A[k, by * bm + i]` of an `(M, K)` tensor; a
tile read `[j, i]` where it is written `[i, j]`). In bounds only while the two dimensions agree, and then silently
wrong. Warnings (`inconsistent-indexing`) at the odd accesses; a square tensor or tile (both axes written alike)
is never reported: its transposed use is legitimate."""
from __future__ import annotations

import ast

from ..diagnostics import Diagnostic, Related, Severity
from .tile_provenance import attr_name, node_span, prim_funcs, target_names

SERIAL = ("Pipelined", "serial", "Serial", "range", "unroll")
TENSORS = ("Tensor", "Buffer", "StridedTensor")
ALLOCS = ("alloc_shared", "alloc_fragment", "alloc_local")


def inconsistent_index_warnings(text: str, fns: list | None = None) -> list[Diagnostic]:
    """The inconsistent-indexing warnings of a file's @T.prim_func kernels (`fns`: its `prim_funcs`, when known)."""
    out: list[Diagnostic] = []
    for fn in prim_funcs(text) if fns is None else fns:
        params = _params(fn)
        scan = _Collect(params)
        scan.visit(fn, {})
        for dims, uses in scan.launches:
            out += _report(dims, uses)
    return out


def _is_kernel(call) -> bool:
    return isinstance(call, ast.Call) and attr_name(call.func) == "Kernel"


def _report(dims: dict, uses: dict) -> list[Diagnostic]:
    """Warnings at the accesses that put a variable on another axis than most of its uses (of another dimension)."""
    out = []
    reported: set = set()
    for (buf, key), by_axis in uses.items():
        if len(by_axis) < 2:
            continue
        shape = dims[buf]
        ranked = sorted(by_axis.items(), key=lambda kv: (-len(kv[1]), min(n.lineno for n in kv[1])))
        home, home_uses = ranked[0]
        for axis, odd in ranked[1:]:
            if shape[axis] == shape[home]:
                continue
            for node in odd:
                if (buf, node.lineno) not in reported:  # one warning a line
                    reported.add((buf, node.lineno))
                    out.append(_warn(buf, key, axis, home, shape, node, home_uses))
    return out


def _params(fn: ast.FunctionDef) -> dict:
    """Tensor parameters of two or more axes -> their dimensions as written."""
    out = {}
    for arg in fn.args.args:
        shape = _shape(arg.annotation)
        if shape is not None and len(shape) >= 2:
            out[arg.arg] = shape
    return out


def _shape(ann) -> list | None:
    """The dims of `T.Tensor((M, K), dtype)` / `T.Tensor[(M, K), dtype]` as source text."""
    if isinstance(ann, ast.Call) and attr_name(ann.func) in TENSORS and ann.args:
        return _tuple(ann.args[0])
    if isinstance(ann, ast.Subscript) and attr_name(ann.value) in TENSORS:
        first = ann.slice.elts[0] if isinstance(ann.slice, ast.Tuple) and ann.slice.elts else None
        return _tuple(first)
    return None


def _tuple(e) -> list | None:
    return [ast.unparse(x) for x in e.elts] if isinstance(e, (ast.Tuple, ast.List)) else None


class _Collect:
    """One walk over a kernel in source order: per `with T.Kernel` block, its tiles' dimensions, the single
    assignments, which variable a name is at each subscript (block indices and serial counters by name, T.Parallel
    variables by the extent they run over) and the axes each one indexes."""

    def __init__(self, params: dict) -> None:
        self.params = params
        self.launches: list = []  # (dims, uses) per launch
        self.dims: dict | None = None
        self.lets: dict = {}
        self.uses: dict = {}

    def visit(self, node, env: dict) -> None:
        if isinstance(node, ast.With) and any(_is_kernel(i.context_expr) for i in node.items):
            saved = self.dims, self.lets, self.uses
            self.dims, self.lets, self.uses = dict(self.params), {}, {}
            self.launches.append((self.dims, self.uses))
            env = dict(env)
            for item in node.items:
                if _is_kernel(item.context_expr) and item.optional_vars is not None:
                    env.update({n: ("block", n) for n in target_names(item.optional_vars) if n})
            for child in node.body:
                self.visit(child, env)
            self.dims, self.lets, self.uses = saved
            return
        if isinstance(node, ast.For) and isinstance(node.iter, ast.Call):
            kind, names = attr_name(node.iter.func), target_names(node.target)
            env = dict(env)
            if kind == "Parallel":
                env.update({n: ("parallel", ast.unparse(x)) for n, x in zip(names, node.iter.args) if n})
            elif kind in SERIAL:
                env.update({n: ("loop", n, node.lineno) for n in names if n})
        elif self.dims is not None and isinstance(node, ast.Assign):
            self.assign(node)
        elif (self.dims is not None and isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name)
              and node.value.id in self.dims):
            self.subscript(node, env)
        for child in ast.iter_child_nodes(node):
            self.visit(child, env)

    def assign(self, node: ast.Assign) -> None:
        """A tile allocation (its dimensions as written) or a name's single assignment (the names it reads)."""
        if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
            return
        name, value = node.targets[0].id, node.value
        if isinstance(value, ast.Call) and attr_name(value.func) in ALLOCS and value.args:
            shape = _tuple(value.args[0])
            if shape is not None and len(shape) >= 2 and name not in self.dims:
                self.dims[name] = shape
            return
        reads = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
        self.lets[name] = None if name in self.lets else reads  # assigned twice: not followed

    def subscript(self, node: ast.Subscript, env: dict) -> None:
        shape = self.dims[node.value.id]
        parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if len(parts) != len(shape):
            return
        seen: dict = {}
        for axis, p in enumerate(parts):
            for key in _keys(p.lower if isinstance(p, ast.Slice) else p, env, self.lets):
                seen.setdefault(key, set()).add(axis)
        for key, axes in seen.items():
            if len(axes) == 1:
                self.uses.setdefault((node.value.id, key), {}).setdefault(next(iter(axes)), []).append(node)


def _keys(e, tracked: dict, lets: dict, depth: int = 0) -> set:
    """The identities of the tracked variables an index expression is built from (through single assignments)."""
    if e is None or depth > 6:
        return set()
    out = set()
    for n in ast.walk(e):
        if not isinstance(n, ast.Name):
            continue
        if n.id in tracked:
            out.add(tracked[n.id])
        elif lets.get(n.id):
            out |= _keys(ast.Tuple([ast.Name(x) for x in lets[n.id]]), tracked, lets, depth + 1)
    return out


def _warn(buf: str, key, axis: int, home: int, shape: list, node, home_uses: list) -> Diagnostic:
    what = f"`{key[1]}`" if key[0] != "parallel" else f"the T.Parallel variable over {key[1]}"
    first = home_uses[0]
    others = len(home_uses) - 1
    more = f" and {others} other place{'s' if others > 1 else ''}" if others else ""
    msg = (f"{what} indexes axis {axis} of {buf} ({shape[axis]}) here, but axis {home} ({shape[home]}) at line "
           f"{first.lineno}{more}: {buf} is indexed two ways (transposed?), in bounds only while {shape[axis]} == "
           f"{shape[home]}; index axis {home} with it as elsewhere (or add `# tilelsp: ignore[inconsistent-indexing]` "
           f"when the transposed use is meant)")
    return Diagnostic("inconsistent-indexing", Severity.WARNING, msg, node_span(node),
                      (Related(node_span(first), f"{what} indexes axis {home} of {buf} here"),))
