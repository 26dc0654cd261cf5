"""CuTe integer tuples for `tilelang.layout.cute`: nested int tuples, `ScaledBasis` (`E(k)`) strides, their
arithmetic (ArithmeticTuple sums), text form (`(2,(3,4))`, `8@0`) and parsing.

A leaf is a Python int, a tvm PrimExpr (a dynamic extent or stride) or a `ScaledBasis`; a tuple is a Python
tuple of them. No tvm import is needed for static values.
"""
from __future__ import annotations

import re


class ScaledBasis:
    """`value @ mode`: a stride that moves coordinate axis `mode` (a path into a nested coordinate) by `value`."""

    def __init__(self, value, mode):
        self.value = value
        self.mode = tuple(mode) if isinstance(mode, (tuple, list)) else (mode,)

    def __mul__(self, other):
        if isinstance(other, ScaledBasis):
            return NotImplemented
        return ScaledBasis(self.value * other, self.mode)

    __rmul__ = __mul__

    def __eq__(self, other):
        return isinstance(other, ScaledBasis) and self.mode == other.mode and leaf_eq(self.value, other.value)

    def __hash__(self):
        return hash((self.mode, str(self.value)))

    def as_tuple(self):
        """The ArithmeticTuple this basis element stands for: `value` at slot `mode`, zeros before it."""
        out = self.value
        for k in reversed(self.mode):
            out = (0,) * k + (out,)
        return out

    def __str__(self):
        return f"{self.value}" + "".join(f"@{k}" for k in reversed(self.mode))

    __repr__ = __str__


def E(*mode) -> ScaledBasis:  # noqa: N802 -- CuTe's name
    """The unit basis element of coordinate axis `mode` (`E(1)`, or `E(1, 0)` for a nested axis)."""
    return ScaledBasis(1, mode)


def is_tuple(x) -> bool:
    """True for a (nested) tuple node."""
    return isinstance(x, tuple)


def is_static(x) -> bool:
    """True for a plain Python int (not a dynamic PrimExpr)."""
    return isinstance(x, int) and not isinstance(x, bool)


def leaf_eq(a, b) -> bool:
    """Equality of two leaves; dynamic values are compared by provable value."""
    if is_static(a) and is_static(b):
        return a == b
    if isinstance(a, ScaledBasis) or isinstance(b, ScaledBasis):
        return isinstance(a, ScaledBasis) and a == b
    from tvm.sym.analyzer import Analyzer

    return bool(Analyzer().can_prove_equal(a, b))


def normalize(x):
    """Lists become tuples, recursively; IntTuple wrappers are unwrapped."""
    if isinstance(x, IntTuple):
        return x.value
    if isinstance(x, (list, tuple)):
        return tuple(normalize(v) for v in x)
    return x


def flatten(x) -> tuple:
    """The leaves of a nested tuple, left to right (a leaf gives a 1-tuple)."""
    if is_tuple(x):
        return tuple(leaf for v in x for leaf in flatten(v))
    return (x,)


def product(x):
    """The product of the leaves of a shape (an int or a PrimExpr)."""
    out = 1
    for leaf in flatten(normalize(x)):
        out = leaf if is_static(out) and out == 1 else out * leaf
    return out


def as_arith(x):
    """A ScaledBasis as its ArithmeticTuple; anything else unchanged."""
    return x.as_tuple() if isinstance(x, ScaledBasis) else x


def add(a, b):
    """CuTe sum: scalars add, tuples add component-wise (the shorter zero-padded), bases become tuples."""
    a, b = as_arith(a), as_arith(b)
    if is_tuple(a) or is_tuple(b):
        if not is_tuple(a):
            a = (a,) if not (is_static(a) and a == 0) else ()
        if not is_tuple(b):
            b = (b,) if not (is_static(b) and b == 0) else ()
        n = max(len(a), len(b))
        a, b = a + (0,) * (n - len(a)), b + (0,) * (n - len(b))
        return tuple(add(x, y) for x, y in zip(a, b))
    if is_static(a) and a == 0:
        return b
    if is_static(b) and b == 0:
        return a
    return a + b


def mul(a, b):
    """CuTe product of a scalar with a leaf or a tuple (component-wise)."""
    if is_tuple(a):
        return tuple(mul(v, b) for v in a)
    if is_tuple(b):
        return tuple(mul(a, v) for v in b)
    if isinstance(a, ScaledBasis):
        return a * b
    if isinstance(b, ScaledBasis):
        return b * a
    return a * b


def to_str(x) -> str:
    """CuTe's text form: `(a,b)` for tuples, `v@k` for bases."""
    if is_tuple(x):
        return "(" + ",".join(to_str(v) for v in x) + ")"
    return str(x)


_TOKEN = re.compile(r"\s*(\(|\)|,|-?\d+(?:@\d+)*)")


def parse_tuple(text: str):
    """The nested int/basis tuple written as `text` (the inverse of `to_str` for static values)."""
    tokens, pos = [], 0
    while pos < len(text.rstrip()):
        m = _TOKEN.match(text, pos)
        if m is None:
            raise ValueError(f"cannot parse CuTe tuple {text!r} at offset {pos}")
        tokens.append(m.group(1))
        pos = m.end()

    def leaf(tok):
        value, *path = tok.split("@")
        return ScaledBasis(int(value), tuple(int(p) for p in reversed(path))) if path else int(value)

    def node(i):
        if tokens[i] != "(":
            return leaf(tokens[i]), i + 1
        items, i = [], i + 1
        while tokens[i] != ")":
            item, i = node(i)
            items.append(item)
            if tokens[i] == ",":
                i += 1
        return tuple(items), i + 1

    value, end = node(0)
    if end != len(tokens):
        raise ValueError(f"trailing text in CuTe tuple {text!r}")
    return value


class IntTuple:
    """A wrapped nested tuple with CuTe arithmetic (`+` adds component-wise, `*` scales)."""

    def __init__(self, value):
        self.value = normalize(value)

    def __add__(self, other):
        return IntTuple(add(self.value, normalize(other)))

    __radd__ = __add__

    def __mul__(self, other):
        return IntTuple(mul(self.value, normalize(other)))

    __rmul__ = __mul__

    def __eq__(self, other):
        return str(self) == str(IntTuple(other))

    def __hash__(self):
        return hash(str(self))

    def __str__(self):
        return to_str(self.value)

    __repr__ = __str__

    @staticmethod
    def parse(text: str) -> IntTuple:
        """The IntTuple written as `text`."""
        return IntTuple(parse_tuple(text))


def from_python(x) -> IntTuple:
    """A Python int / nested list or tuple / ScaledBasis as an IntTuple."""
    return IntTuple(x)


def to_python(x):
    """An IntTuple as plain Python ints and tuples (bases stay ScaledBasis)."""
    return normalize(x)
