"""CuTe layouts for `tilelang.layout.cute`: `Layout(shape, stride)` as a function from coordinates to indices
(or, with `ScaledBasis` strides, to coordinates) and the layout algebra: coalesce, composition, complement,
right inverse, logical divide / product, cosize / coshape, compatibility, restriction to sub-ranges.

Semantics follow CuTe's published layout algebra (mode 0 varies fastest; an integer coordinate runs through
the last mode without wrapping). Shapes and strides may hold tvm PrimExprs where CuTe allows dynamic values.
"""
from __future__ import annotations

from .cute_tuple import (ScaledBasis, add, flatten, is_static, is_tuple, leaf_eq, mul, normalize, parse_tuple,
                         product, to_str)


def _prefix_products(shape) -> tuple:
    """The compact column-major strides of a flat tuple of extents."""
    out, acc = [], 1
    for s in shape:
        out.append(acc)
        acc = s if is_static(acc) and acc == 1 else acc * s
    return tuple(out)


def _compact(shape, current, row_major: bool):
    """Compact strides congruent to `shape`, starting at `current`; returns (strides, next stride)."""
    if is_tuple(shape):
        modes = reversed(shape) if row_major else shape
        out = []
        for s in modes:
            sub, current = _compact(s, current, row_major)
            out.append(sub)
        return (tuple(reversed(out)) if row_major else tuple(out)), current
    return current, (shape if is_static(current) and current == 1 else current * shape)


def _crd2idx(crd, shape, stride):
    """The index of a (possibly hierarchical, possibly integer) coordinate."""
    if is_tuple(crd):
        if not is_tuple(shape) or len(crd) != len(shape):
            raise ValueError(f"coordinate {to_str(crd)} is not congruent to shape {to_str(shape)}")
        out = 0
        for c, s, d in zip(crd, shape, stride):
            out = add(out, _crd2idx(c, s, d))
        return out
    if is_tuple(shape):
        out = 0
        for s, d in zip(shape[:-1], stride[:-1]):
            n = product(s)
            out = add(out, _crd2idx(crd % n, s, d))
            crd = crd // n
        return add(out, _crd2idx(crd, shape[-1], stride[-1]))
    return mul(crd, stride)


class Layout:
    """`shape:stride`: maps a coordinate of `shape` to the sum of its components times `stride`."""

    def __init__(self, shape, stride=None):
        self.shape = normalize(shape)
        self.stride = normalize(stride) if stride is not None else _compact(self.shape, 1, False)[0]

    def __call__(self, crd):
        return _crd2idx(normalize(crd), self.shape, self.stride)

    def __getitem__(self, i: int) -> Layout:
        if not is_tuple(self.shape):
            if i != 0:
                raise IndexError(f"rank-1 layout {self} has no mode {i}")
            return self
        return Layout(self.shape[i], self.stride[i])

    def __iter__(self):
        return (self[i] for i in range(rank(self)))

    def __len__(self):
        return rank(self)

    def __eq__(self, other):
        return isinstance(other, Layout) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def __str__(self):
        return f"{to_str(self.shape)}:{to_str(self.stride)}"

    __repr__ = __str__

    def with_shape(self, shape) -> Layout:
        """This layout's function reinterpreted over `shape` (column-major), e.g. `(8):(1)` over `(2, 4)`."""
        return composition(self, make_layout(shape))

    @staticmethod
    def parse(text: str) -> Layout:
        """The layout written `shape:stride` (the inverse of `str`)."""
        depth = 0
        for pos, ch in enumerate(text):
            depth += (ch == "(") - (ch == ")")
            if ch == ":" and depth == 0:
                return Layout(parse_tuple(text[:pos]), parse_tuple(text[pos + 1:]))
        raise ValueError(f"a CuTe layout is written shape:stride, got {text!r}")

    def to_tilelang(self):
        """This layout as a TileLang host `Layout` over its top-level mode sizes (one output per axis)."""
        from .host_layout import Layout as HostLayout

        def forward(*idx):
            value = self(tuple(idx))
            return list(flatten(value)) if is_tuple(value) else value

        return HostLayout([int(product(s)) for s in (self.shape if is_tuple(self.shape) else (self.shape,))],
                          forward)


def make_layout(shape, stride=None) -> Layout:
    """`make_layout(shape, stride=None)` (compact column-major by default), or `make_layout([L0, L1, ...])`:
    the layout whose modes are the given layouts."""
    if isinstance(shape, (list, tuple)) and shape and all(isinstance(x, Layout) for x in shape):
        return Layout(tuple(x.shape for x in shape), tuple(x.stride for x in shape))
    if isinstance(shape, Layout):
        return shape
    return Layout(shape, stride)


def make_column_major_layout(shape) -> Layout:
    """The compact layout of `shape` with mode 0 fastest."""
    return Layout(shape)


def make_row_major_layout(shape) -> Layout:
    """The compact layout of `shape` with the last mode fastest."""
    shape = normalize(shape)
    return Layout(shape, _compact(shape, 1, True)[0])


def _basis_strides(shape, path: tuple):
    if is_tuple(shape):
        return tuple(_basis_strides(s, path + (k,)) for k, s in enumerate(shape))
    return ScaledBasis(1, path)


def make_identity_layout(shape) -> Layout:
    """The layout sending each coordinate of `shape` to itself (strides are the unit bases E(k))."""
    shape = normalize(shape)
    if is_tuple(shape):
        return Layout(shape, tuple(_basis_strides(s, (k,)) for k, s in enumerate(shape)))
    return Layout(shape, ScaledBasis(1, (0,)))


def size(x):
    """The domain size of a layout (or of a shape)."""
    if isinstance(x, Layout):
        return product(x.shape)
    if hasattr(x, "layout") and isinstance(x.layout, Layout):
        return product(x.layout.shape)
    return product(x)


def rank(x) -> int:
    """The number of top-level modes."""
    shape = x.shape if isinstance(x, Layout) else normalize(x)
    return len(shape) if is_tuple(shape) else 1


def flatten_to_tuple(x) -> tuple:
    """The leaves of a nested shape or stride as a flat tuple."""
    return flatten(normalize(x))


def flatten_layout(layout: Layout) -> Layout:
    """The layout with its hierarchy removed (one mode per leaf)."""
    shape, stride = flatten(layout.shape), flatten(layout.stride)
    if not is_tuple(layout.shape):
        return layout
    return Layout(shape, stride)


def _packed(shapes: list, strides: list) -> Layout:
    """A layout from flat mode lists: a single mode is scalar-shaped, none is `1:0`."""
    if not shapes:
        return Layout(1, 0)
    if len(shapes) == 1:
        return Layout(shapes[0], strides[0])
    return Layout(tuple(shapes), tuple(strides))


def _is_one(x) -> bool:
    return is_static(x) and x == 1


def coalesce(layout: Layout) -> Layout:
    """The same function with size-1 modes dropped and contiguous modes fused (a flat result)."""
    shapes, strides = [], []
    for s, d in zip(flatten(layout.shape), flatten(layout.stride)):
        if _is_one(s):
            continue
        if shapes and leaf_eq(mul(shapes[-1], strides[-1]), d):
            shapes[-1] = shapes[-1] * s
        else:
            shapes.append(s)
            strides.append(d)
    return _packed(shapes, strides)


def filter_layout(layout: Layout) -> Layout:
    """`coalesce` after dropping stride-0 modes."""
    keep = [(s, d) for s, d in zip(flatten(layout.shape), flatten(layout.stride)) if not (is_static(d) and d == 0)]
    return coalesce(Layout(tuple(s for s, _ in keep), tuple(d for _, d in keep)))


def _ceil_div(a, b):
    return -(-a // b) if is_static(a) and is_static(b) else (a + b - 1) // b


def _compose_flat(a: Layout, shape, stride):
    """A composed with the single mode `shape:stride` (stride an int); returns (shapes, strides)."""
    if is_static(stride) and stride == 0:
        return [shape], [0]
    flat = coalesce(a)
    fshape, fstride = flatten(flat.shape), flatten(flat.stride)
    shapes, strides = [], []
    rest_shape, rest_stride = shape, stride
    for cs, cd in zip(fshape[:-1], fstride[:-1]):
        if is_static(cs) and is_static(rest_stride) and cs % rest_stride and rest_stride % cs:
            raise ValueError(f"composition: stride {rest_stride} does not divide into mode {cs} of {a}")
        new = min(max(1, cs // rest_stride), rest_shape) if is_static(cs) and is_static(rest_shape) else rest_shape
        if not _is_one(new):
            shapes.append(new)
            strides.append(mul(rest_stride, cd))
        rest_shape = rest_shape // new
        rest_stride = _ceil_div(rest_stride, cs)
    if not _is_one(rest_shape) or not shapes:
        shapes.append(rest_shape)
        strides.append(mul(rest_stride, fstride[-1]))
    return shapes, strides


def _basis_get(a: Layout, mode: tuple) -> Layout:
    for k in mode:
        a = a[k]
    return a


def composition(a: Layout, b) -> Layout:
    """`a o b`: the layout with b's domain whose value at i is a(b(i))."""
    if b is None:
        return a
    if not isinstance(b, Layout):
        b = make_layout(b)
    if is_tuple(b.shape):
        return make_layout([composition(a, b[i]) for i in range(rank(b))])
    if _is_one(b.shape):
        return Layout(1, 0)
    if isinstance(b.stride, ScaledBasis):
        return composition(_basis_get(a, b.stride.mode), Layout(b.shape, b.stride.value))
    shapes, strides = _compose_flat(a, b.shape, b.stride)
    return _packed(shapes, strides)


def complement(layout: Layout, cotarget=1) -> Layout:
    """The layout of the indices below `cotarget` that `layout` does not reach (ordered, coalesced)."""
    pairs = list(zip(flatten(layout.stride), flatten(layout.shape)))
    if len(pairs) > 1 and not all(is_static(d) for d, _ in pairs):
        raise ValueError(f"complement: a dynamic-stride layout must be rank-1, got {layout}")
    shapes, strides, current = [], [], 1
    for d, s in sorted(pairs, key=lambda p: p[0] if is_static(p[0]) else 0):
        if (is_static(d) and d == 0) or _is_one(s):
            continue
        shapes.append(d // current if is_static(d) and is_static(current) else d)
        strides.append(current)
        current = s * d
    shapes.append(_ceil_div(cotarget, current))
    strides.append(current)
    return coalesce(Layout(tuple(shapes), tuple(strides)))


def right_inverse(layout: Layout) -> Layout:
    """A layout r with layout(r(i)) == i for every i < size(r)."""
    flat_shape, flat_stride = flatten(layout.shape), flatten(layout.stride)
    shapes, strides, current = [], [], 1
    for d, s, r in sorted(zip(flat_stride, flat_shape, _prefix_products(flat_shape)), key=lambda t: t[0]):
        if _is_one(s):
            continue
        if d != current:
            break
        shapes.append(s)
        strides.append(r)
        current = s * d
    return coalesce(Layout(tuple(shapes), tuple(strides)))


def left_inverse(layout: Layout) -> Layout:
    """A layout l with l(layout(i)) == i for every i in layout's domain (indices it never reaches map to
    anything; a gap below the smallest stride gets stride 0)."""
    flat = coalesce(layout)
    shapes, strides = flatten(flat.shape), flatten(flat.stride)
    if not all(is_static(x) for x in shapes + strides):
        raise ValueError(f"left_inverse needs a static layout, got {layout}")
    modes = sorted((d, s, r) for d, s, r in zip(strides, shapes, _prefix_products(shapes)) if d != 0 and s != 1)
    out_shapes, out_strides, current, gap_stride = [], [], 1, 0
    for d, s, r in modes:
        if d // current > 1:
            out_shapes.append(d // current)
            out_strides.append(gap_stride)
        out_shapes.append(s)
        out_strides.append(r)
        current, gap_stride = s * d, r * s
    return coalesce(Layout(tuple(out_shapes), tuple(out_strides)))


def cosize(layout: Layout):
    """The codomain size: 1 + sum of (shape - 1) * |stride| over the leaves (per-axis product for bases)."""
    co = coshape(layout)
    return product(co) if is_tuple(co) else co


def coshape(layout: Layout):
    """The codomain extent: a scalar for integer strides, one extent per axis for ScaledBasis strides."""
    axes: dict = {}
    scalar = 1
    for s, d in zip(flatten(layout.shape), flatten(layout.stride)):
        if isinstance(d, ScaledBasis):
            axes[d.mode] = axes.get(d.mode, 1) + (s - 1) * abs(d.value)
        else:
            scalar = scalar + (s - 1) * (abs(d) if is_static(d) else _abs(d))
    if not axes:
        return scalar
    return tuple(axes.get((k,), 1) for k in range(max(m[0] for m in axes) + 1))


def _abs(x):
    """|x| of a dynamic stride (CuTe's abs in cosize)."""
    from tvm import tirx

    return tirx.abs(x)


def congruent(a, b) -> bool:
    """True when `a` and `b` have the same tuple structure."""
    a, b = normalize(a), normalize(b)
    if is_tuple(a) and is_tuple(b):
        return len(a) == len(b) and all(congruent(x, y) for x, y in zip(a, b))
    return not is_tuple(a) and not is_tuple(b)


def compatible(a, b) -> bool:
    """True when every coordinate of shape `a` is a coordinate of shape `b` (a leaf of `a` may cover a
    subtree of `b` of the same size)."""
    a, b = normalize(a), normalize(b)
    if is_tuple(a):
        return is_tuple(b) and len(a) == len(b) and all(compatible(x, y) for x, y in zip(a, b))
    return leaf_eq(a, product(b))


def logical_divide(layout: Layout, tiler: Layout) -> Layout:
    """`layout` split into (tile, rest): the tiler's elements first, then the tiles."""
    return composition(layout, make_layout([tiler, complement(tiler, size(layout))]))


def logical_product(block: Layout, tiler: Layout) -> Layout:
    """(block, tiler-many copies of block laid out in the block's complement)."""
    rest = composition(complement(block, size(block) * cosize(tiler)), tiler)
    return make_layout([block, rest])


def tiled_product(block: Layout, tiler: Layout) -> Layout:
    """`logical_product` with the repeated mode's top-level modes unpacked next to the block:
    (block, rest0, rest1, ...) when the rest has rank >= 2."""
    product_ = logical_product(block, tiler)
    rest = product_[1]
    if rank(rest) < 2:
        return product_
    return make_layout([block, *[rest[i] for i in range(rank(rest))]])


def _append(layout: Layout, r: int) -> Layout:
    """`layout` padded to rank `r` with (1):(0) modes."""
    modes = [layout[i] for i in range(rank(layout))] if is_tuple(layout.shape) else [layout]
    return make_layout(modes + [Layout(1, 0)] * (r - len(modes)))


def blocked_product(block: Layout, tiler: Layout) -> Layout:
    """Mode i is (block_i, tiler repeat_i): the block repeated over the tiler, mode by mode (the lower rank padded)."""
    r = max(rank(block), rank(tiler))
    product_ = logical_product(_append(block, r), _append(tiler, r))
    first, rest = product_[0], product_[1]
    return make_layout([make_layout([first[i], rest[i]]) for i in range(r)])


def restrict(layout: Layout, ranges):
    """(offset, sublayout) for one Range per top-level mode: layout(mins + c) == offset + sublayout(c)."""
    ranges = list(ranges)
    if len(ranges) != rank(layout):
        import tvm

        raise tvm.error.InternalError(f"restrict: {len(ranges)} ranges for the rank-{rank(layout)} layout {layout}")
    mins = tuple(_int_or_expr(r.min) for r in ranges)
    offset = layout(mins if is_tuple(layout.shape) else mins[0])
    modes = [composition(layout[k], Layout(_int_or_expr(r.extent), 1)) for k, r in enumerate(ranges)]
    return offset, (make_layout(modes) if is_tuple(layout.shape) else modes[0])


def _int_or_expr(x):
    """A constant tvm IntImm as an int; anything else unchanged."""
    value = getattr(x, "value", None)
    return value if is_static(value) else x
