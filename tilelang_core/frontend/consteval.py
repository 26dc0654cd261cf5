"""Constant evaluation without executing the user's file: an environment of names (`Env`) and an ast
evaluator; whatever cannot be computed becomes `Unknown` (inside a kernel, a symbolic `Var`, never an
error). Module and factory bodies are walked by bodies.py; calls of known functions by constcalls.py.
"""
from __future__ import annotations

import ast
import builtins
import operator

from ..ir import nodes as N
from ..ir.arith import checked_op
from .constcalls import MAX_ITEMS, SAFE_BUILTINS, ArgsNamespace, call_or, call_value, get_attr, make_tensor_spec
from .lambdas import function_def
from .node_text import node_text
from .values import BuiltinRef, ConstDims, EnumValue, Unknown, UserFunc, is_concrete, is_expr, is_scalar, to_expr

_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
           ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitAnd: "&", ast.BitOr: "|", ast.BitXor: "^"}
_PYOPS = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv, "//": operator.floordiv,
          "%": operator.mod, "**": operator.pow, "<<": operator.lshift, ">>": operator.rshift, "&": operator.and_,
          "|": operator.or_, "^": operator.xor}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}
_PYCMP = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
_PY_BUILTINS = frozenset(dir(builtins))


def binop_symbol(op: ast.operator) -> str | None:
    """The tile-IR spelling of a Python binary operator (`ast.Add()` -> "+"); None for `@`, which has none."""
    return _BINOPS.get(type(op))


class Env:
    """A chain of name -> value maps (module, factory, kernel scopes)."""

    def __init__(self, values: dict | None = None, parent: "Env | None" = None):
        self.values = dict(values or {})
        self.parent = parent

    def lookup(self, name: str):
        """The value bound to `name` (KeyError when unbound everywhere)."""
        env = self
        while env is not None:
            if name in env.values:
                return env.values[name]
            env = env.parent
        if name in SAFE_BUILTINS:
            return SAFE_BUILTINS[name]
        if name in _PY_BUILTINS:
            return Unknown(name)
        raise KeyError(name)

    def names(self) -> set[str]:
        """Every visible name (for did-you-mean suggestions)."""
        out, env = set(SAFE_BUILTINS), self
        while env is not None:
            out.update(env.values)
            env = env.parent
        return out

    def child(self, values: dict | None = None) -> "Env":
        """A nested scope."""
        return Env(values, self)


def binop(op: str, a, b):
    """Apply a binary operator to two values: folded when both are known, else an IR BinOp (or Unknown)."""
    if is_scalar(a) and is_scalar(b) or isinstance(a, (str, tuple, list)) and op in ("+", "*", "%"):
        if op == "*" and isinstance(a, (str, tuple, list)) and isinstance(b, int) and len(a) * b > MAX_ITEMS:
            return Unknown(f"{_short(a)} * {_short(b)}", f"a sequence of over {MAX_ITEMS:,} items")
        if not (is_scalar(b) or isinstance(b, (str, tuple, list))):  # `[32] * num_stages`, num_stages unknown
            return Unknown(f"{_short(a)} {op} ?")
        try:
            return checked_op(op, a, b) if is_scalar(a) and is_scalar(b) else _PYOPS[op](a, b)
        except Exception as exc:  # noqa: BLE001 - any Python failure means "not statically known"
            return Unknown(f"{_short(a)} {op} {_short(b)}", str(exc) or type(exc).__name__)
    ea, eb = to_expr(a), to_expr(b)
    if ea is None or eb is None:
        return Unknown(op)
    return N.BinOp(op, ea, eb)


def _short(v) -> str:
    """A value for a message: long integers are abbreviated (they may be too long to print at all)."""
    if isinstance(v, int) and v.bit_length() > 64:
        return f"<an integer of {v.bit_length()} bits>"
    return repr(v)


def _chain(a, b):
    """`a and b` for two links of a chained comparison (`128 <= tx < 256`): IR comparisons become a BoolOp."""
    if is_scalar(a) and is_scalar(b):
        return a and b
    if is_scalar(a) or is_scalar(b):
        known, other = (a, b) if is_scalar(a) else (b, a)
        return other if known else known
    ea, eb = to_expr(a), to_expr(b)
    return N.BoolOp("and", (ea, eb)) if ea is not None and eb is not None else Unknown()


def compare(op: str, a, b):
    """Compare two values: a bool when known, else an IR Compare."""
    python = (is_scalar(a) and is_scalar(b)) or (isinstance(a, str) and isinstance(b, str))
    if python or a is None or b is None or isinstance(a, EnumValue) or isinstance(b, EnumValue):
        if not python and op not in ("==", "!="):
            return Unknown(op)
        if not python and (isinstance(a, (Unknown, N.Var)) or isinstance(b, (Unknown, N.Var))):
            return Unknown(op)  # an unknown value compared with None / an enum
        try:
            return _PYCMP[op](a, b)
        except TypeError:
            return Unknown(op)
    ea, eb = to_expr(a), to_expr(b)
    if ea is None or eb is None:
        return Unknown(op)
    return N.Compare(op, ea, eb)


_DISPATCH: dict = {}


def _unknown_node(self, node):
    return Unknown(node_text(node))


class Evaluator(ast.NodeVisitor):
    """Evaluate an ast expression to a frontend value in an Env; unknown constructs give `Unknown`."""

    def __init__(self, env: Env, argparse_defaults: dict | None = None):
        self.env = env
        self.argparse = argparse_defaults if argparse_defaults is not None else {}

    def eval(self, node: ast.AST):
        """The value of an expression node."""
        key = (type(self), type(node))
        fn = _DISPATCH.get(key)
        if fn is None:
            fn = _DISPATCH[key] = getattr(type(self), "visit_" + type(node).__name__, _unknown_node)
        return fn(self, node)

    def visit_Constant(self, node):
        return node.value

    def visit_Name(self, node):
        try:
            return self.env.lookup(node.id)
        except KeyError:
            return self.undefined(node)

    def operand(self, v):
        """Hook: convert a value used as an arithmetic operand (the kernel parser reads alloc_var buffers)."""
        return v

    def undefined(self, node):
        """A name bound nowhere (the kernel parser reports it; here it is just unknown)."""
        return Unknown(node.id)

    def visit_Attribute(self, node):
        base = self.eval(node.value)
        return get_attr(base, node.attr, node)

    def visit_BinOp(self, node):
        op = binop_symbol(node.op)
        if op is None:
            return Unknown(node_text(node))
        return binop(op, self.operand(self.eval(node.left)), self.operand(self.eval(node.right)))

    def visit_UnaryOp(self, node):
        v = self.operand(self.eval(node.operand))
        if isinstance(node.op, ast.Not):
            return (not v) if is_scalar(v) or v is None else (N.UnaryOp("not", to_expr(v)) if is_expr(v) else Unknown())
        if isinstance(node.op, ast.UAdd):
            return v
        op = "-" if isinstance(node.op, ast.USub) else "~"
        if is_scalar(v):
            try:
                return -v if op == "-" else ~int(v)
            except (OverflowError, ValueError) as exc:  # ~ of inf or nan
                return Unknown(node_text(node), str(exc))
        return N.UnaryOp(op, v) if is_expr(v) else Unknown(node_text(node))

    def visit_BoolOp(self, node):
        vals = [self.operand(self.eval(v)) for v in node.values]
        if all(is_scalar(v) or v is None or isinstance(v, str) for v in vals):
            result = vals[0]
            for v in vals[1:]:
                result = (result and v) if isinstance(node.op, ast.And) else (result or v)
            return result
        exprs = [to_expr(v) for v in vals]
        if any(e is None for e in exprs):
            return Unknown(node_text(node))
        return N.BoolOp("and" if isinstance(node.op, ast.And) else "or", tuple(exprs))

    def visit_Compare(self, node):
        left, result = self.operand(self.eval(node.left)), True
        for op, comp in zip(node.ops, node.comparators):
            right = self.operand(self.eval(comp))
            if isinstance(op, (ast.In, ast.NotIn)):
                if not isinstance(right, (tuple, list, dict, str)) or not is_concrete(left) or not is_concrete(right):
                    return Unknown(node_text(node))
                r = left in right
                r = r if isinstance(op, ast.In) else not r
            elif isinstance(op, (ast.Is, ast.IsNot)):
                if (left is None or right is None) and not (isinstance(left, Unknown) or isinstance(right, Unknown)):
                    r = (left is right) == isinstance(op, ast.Is)
                else:
                    r = Unknown()
            else:
                r = compare(_CMPOPS[type(op)], left, right)
            result = r if result is True else _chain(result, r)
            left = right
        return result

    def visit_IfExp(self, node):
        cond = self.operand(self.eval(node.test))
        if is_scalar(cond) or cond is None or isinstance(cond, str):
            return self.eval(node.body if cond else node.orelse)
        va, vb = self.operand(self.eval(node.body)), self.operand(self.eval(node.orelse))
        c = to_expr(cond)
        if isinstance(va, (tuple, list)) and isinstance(vb, (tuple, list)) and len(va) == len(vb) and c is not None:
            pairs = [(to_expr(x), to_expr(y)) for x, y in zip(va, vb)]
            if all(x is not None and y is not None for x, y in pairs):
                return tuple(x if x == y else N.Select(c, x, y) for x, y in pairs)
        a, b = to_expr(va), to_expr(vb)
        if a is None or b is None or c is None:
            return Unknown(node_text(node))
        return N.Select(c, a, b)

    def visit_Tuple(self, node):
        return tuple(self._elts(node.elts))

    def visit_List(self, node):
        return list(self._elts(node.elts))

    def _elts(self, elts):
        out = []
        for e in elts:
            if isinstance(e, ast.Starred):
                v = self.eval(e.value)
                out.extend(v if isinstance(v, (tuple, list)) else [Unknown(node_text(e))])
            else:
                out.append(self.eval(e))
        return out

    def visit_Lambda(self, node):
        """A lambda: a helper that a kernel calling it inlines (lambdas.py)."""
        return UserFunc(function_def(node), self.env)

    def visit_Dict(self, node):
        out = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                continue
            key = self.eval(k)
            try:
                out[key] = self.eval(v)
            except TypeError:
                return Unknown(node_text(node))
        return out

    def visit_Subscript(self, node):
        base, index = self.eval(node.value), self.eval(node.slice)
        if isinstance(base, BuiltinRef) and base.short in ("Tensor", "Buffer", "StridedTensor"):
            parts = index if isinstance(index, tuple) else (index,)
            at = 2 if base.short == "StridedTensor" else 1  # T.StridedTensor[shape, strides, dtype]
            return make_tensor_spec(parts[0] if parts else (), parts[at] if len(parts) > at else "float32")
        if isinstance(base, (tuple, list, str, dict)) and not isinstance(index, Unknown):
            try:
                return base[index]
            except Exception:  # noqa: BLE001
                return Unknown(node_text(node))
        return Unknown(node_text(node))

    def visit_Slice(self, node):
        parts = [None if p is None else self.eval(p) for p in (node.lower, node.upper, node.step)]
        return slice(*parts) if all(p is None or isinstance(p, int) for p in parts) else Unknown(":")

    def visit_ListComp(self, node):
        return self._comprehension(node, list)

    def visit_GeneratorExp(self, node):
        return self._comprehension(node, tuple)

    def visit_SetComp(self, node):
        return Unknown(node_text(node))

    def _comprehension(self, node, kind):
        """A one-`for` comprehension over a known sequence, evaluated element by element."""
        if len(node.generators) != 1 or node.generators[0].is_async:
            return Unknown(node_text(node))
        gen = node.generators[0]
        seq = self.eval(gen.iter)
        if not isinstance(seq, (tuple, list, range)) or len(seq) > 10000:
            return Unknown(node_text(node))
        saved, out = self.env, []
        try:
            for item in seq:
                self.env = saved.child()
                bind_target(gen.target, item, self.env)
                conds = [self.eval(c) for c in gen.ifs]
                if not all(is_scalar(c) or c is None or isinstance(c, (str, tuple, list)) for c in conds):
                    return Unknown(node_text(node))  # a filter the checker cannot decide
                if all(conds):
                    out.append(self.eval(node.elt))
        finally:
            self.env = saved
        return kind(out)

    def visit_JoinedStr(self, node):
        return Unknown("f-string")

    def visit_Call(self, node):
        func = self.eval(node.func)
        args, kwargs = self.call_args(node)
        if isinstance(node.func, ast.Attribute) and node.func.attr in ("add_argument", "parse_args", "parse_known_args"):
            return self._argparse(node.func.attr, args, kwargs)
        return call_value(func, args, kwargs, node_text(node))

    def call_args(self, node):
        """Evaluate positional (with *splat) and keyword (with **splat) arguments."""
        args = self._elts(node.args)
        kwargs = {}
        for kw in node.keywords:
            v = self.eval(kw.value)
            if kw.arg is not None:
                kwargs[kw.arg] = v
            elif isinstance(v, dict):
                kwargs.update({k: x for k, x in v.items() if isinstance(k, str)})
        return args, kwargs

    def _argparse(self, attr, args, kwargs):
        if attr == "add_argument":
            names = [a for a in args if isinstance(a, str)]
            longs = [a for a in names if a.startswith("--")] or names
            if longs:
                dest = kwargs.get("dest") or longs[0].lstrip("-").replace("-", "_")
                default = kwargs.get("default")
                if isinstance(default, str) and callable(kwargs.get("type")) and kwargs["type"] in (int, float):
                    default = call_or(lambda: kwargs["type"](default), default)
                self.argparse[dest] = default if "default" in kwargs else None
            return None
        return ArgsNamespace(dict(self.argparse))


def bind_target(target, value, env: Env) -> None:
    """Bind an assignment target (a name or a tuple of names) to a value, unpacking when possible."""
    if isinstance(target, ast.Name):
        env.values[target.id] = value
    elif isinstance(target, (ast.Tuple, ast.List)):
        if isinstance(value, ConstDims):
            value = tuple(N.Var(n, "int32", "param") for n in value.names)
        n = len(target.elts)
        known = isinstance(value, (tuple, list)) and len(value) == n
        vals = list(value) if known else [Unknown(node_text(e)) for e in target.elts]
        for t, v in zip(target.elts, vals):
            bind_target(t, v, env)
    elif isinstance(target, ast.Starred):
        bind_target(target.value, Unknown("*"), env)


def is_known(v) -> bool:
    """True when a value is fully known at compile time (no Unknown, no symbolic expression)."""
    if isinstance(v, (tuple, list)):
        return all(is_known(x) for x in v)
    return not isinstance(v, Unknown) and not is_expr(v) or isinstance(v, N.Const)
