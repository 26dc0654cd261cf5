"""Recovering CuTe layouts from TileLang host layouts (`tilelang.layout.cute`): a plain affine layout, a
per-axis coordinate layout, or a swizzle over an affine layout (`ComposedLayout`, `Swizzle` = CuTe's
`Sw<b_bits, m_base, s_shift>`).

Everything works on the TileLang layout's evaluated forward map (host_layout), so recovery is exact: a
candidate is accepted only when it reproduces every index of the domain.
"""
from __future__ import annotations

import re

from .cute_layout import Layout, make_layout
from .cute_tuple import ScaledBasis
from .dtypes import dtype_bits


class Swizzle:
    """`Sw<b_bits, m_base, s_shift>`: x ^ ((x & (mask << (m_base + s_shift))) >> s_shift), mask = 2**b_bits - 1."""

    def __init__(self, b_bits: int, m_base: int, s_shift: int):
        self.b_bits, self.m_base, self.s_shift = b_bits, m_base, s_shift

    @property
    def is_swizzled(self) -> bool:
        """False for the identity swizzle (b_bits == 0)."""
        return self.b_bits > 0

    def __call__(self, x):
        yyy = ((1 << self.b_bits) - 1) << (self.m_base + self.s_shift)
        return x ^ ((x & yyy) >> self.s_shift)

    def __eq__(self, other):
        return isinstance(other, Swizzle) and str(self) == str(other)

    def __hash__(self):
        return hash(str(self))

    def __str__(self):
        return f"Sw<{self.b_bits},{self.m_base},{self.s_shift}>"

    __repr__ = __str__

    @staticmethod
    def parse(text: str) -> Swizzle:
        """The swizzle written `Sw<b,m,s>`."""
        m = re.fullmatch(r"\s*Sw<(\d+),(\d+),(\d+)>\s*", text)
        if m is None:
            raise ValueError(f"a swizzle is written Sw<b,m,s>, got {text!r}")
        return Swizzle(*(int(g) for g in m.groups()))


class ComposedLayout:
    """`swizzle o (offset + layout)`: the index of coordinate c is swizzle(offset + layout(c))."""

    def __init__(self, swizzle: Swizzle, offset: int, layout: Layout):
        self.swizzle, self.offset, self.layout = swizzle, offset, layout

    def __call__(self, crd):
        return self.swizzle(self.offset + self.layout(crd))

    def __str__(self):
        return f"{self.swizzle} o {self.offset} o {self.layout}"

    __repr__ = __str__

    def recast(self, old_bits: int, new_bits: int) -> ComposedLayout:
        """The swizzle seen through elements of `new_bits` instead of `old_bits` (m_base moves by the log2 ratio;
        an identity swizzle stays the identity)."""
        if not self.swizzle.is_swizzled:
            return self
        shift = _log2(old_bits) - _log2(new_bits)
        sw = self.swizzle
        return ComposedLayout(Swizzle(sw.b_bits, sw.m_base + shift, sw.s_shift), self.offset, self.layout)

    @staticmethod
    def from_tilelang(layout, buffer=None):
        """The swizzle-over-affine form of a TileLang layout (outputs linearized row-major), or None when no
        swizzle makes it affine. With `buffer`, the swizzle and layout are given in bytes of its dtype."""
        return composed_from_tilelang(layout, buffer)


def _log2(n: int) -> int:
    """log2 of a power-of-two element width."""
    if n <= 0 or n & (n - 1):
        raise ValueError(f"recast needs power-of-two element widths, got {n}")
    return n.bit_length() - 1


def _input_shape(layout) -> tuple[int, ...]:
    """The constant input shape of a TileLang host layout."""
    if not callable(getattr(layout, "outputs", None)):
        raise TypeError(f"recovering a CuTe layout takes a TileLang layout (tilelang.layout.Layout), "
                        f"got {type(layout).__name__}")
    dims = tuple(layout.get_input_shape())
    if not all(isinstance(d, int) for d in dims):
        raise ValueError(f"the layout's input shape must be constant, got {list(dims)}")
    return dims


def _linear_address(layout):
    """The layout's outputs as one int64 address array (row-major over its output shape)."""
    outs = layout.outputs()
    address = outs[0]
    for out, extent in zip(outs[1:], layout.get_output_shape()[1:]):
        address = address * extent + out
    return address


def _dim_modes(values, extent: int):
    """Split g(x), x < extent (g(0) == 0), into CuTe modes [(size, stride)] by runs of a constant step, or None."""
    modes, base = [], 1
    while base < extent:
        step = values[base]
        count = 1
        while base * count < extent and _same(values[base * count], step * count):
            count += 1
        total = extent // base
        while total % count:
            count -= 1
        if count < 2:
            return None
        modes.append((count, step))
        base *= count
    return modes


def _same(a, b) -> bool:
    """Equality of two per-axis steps (numpy vectors)."""
    return bool((a == b).all()) if hasattr(a, "all") else a == b


def _affine_modes(arrays: list, shape: tuple[int, ...]):
    """Per input dim the modes of the vector-valued map `arrays` (each array over `shape`, zero at the origin),
    checked to reproduce every index; None when it is not a sum of per-dim affine runs."""
    import numpy as np

    per_dim = []
    for d, extent in enumerate(shape):
        index = [0] * len(shape)
        column = []
        for x in range(extent):
            index[d] = x
            column.append(np.array([int(a[tuple(index)]) for a in arrays], dtype=np.int64))
        modes = _dim_modes(column, extent) if extent > 1 else [(1, np.zeros(len(arrays), dtype=np.int64))]
        if modes is None:
            return None
        per_dim.append(modes)
    grids = np.indices(shape, dtype=np.int64)
    for k, target in enumerate(arrays):
        rebuilt = np.zeros(shape, dtype=np.int64)
        for d, modes in enumerate(per_dim):
            rest = grids[d]
            for size_, step in modes:
                rebuilt += (rest % size_) * int(step[k])
                rest = rest // size_
        if not np.array_equal(rebuilt, target):
            return None
    return per_dim


def _mode_tree(per_dim: list, stride_of):
    """A layout with one top-level mode per input dim (scalar when the dim is one run)."""
    shapes, strides = [], []
    for modes in per_dim:
        sizes = tuple(s for s, _ in modes)
        steps = tuple(stride_of(step) for _, step in modes)
        shapes.append(sizes[0] if len(sizes) == 1 else sizes)
        strides.append(steps[0] if len(steps) == 1 else steps)
    return make_layout(tuple(shapes), tuple(strides))


def affine_from_tilelang(layout):
    """A TileLang layout as a plain `shape:stride` layout (outputs linearized), or None if not affine."""
    shape = _input_shape(layout)
    address = _linear_address(layout)
    if int(address.flat[0]) != 0:
        return None
    per_dim = _affine_modes([address], shape)
    return None if per_dim is None else _mode_tree(per_dim, lambda step: int(step[0]))


def hierarchical_from_tilelang(layout):
    """A TileLang layout as a layout onto its output coordinates (output k on basis E(k)), or None."""
    shape = _input_shape(layout)
    outs = layout.outputs()
    if any(int(o.flat[0]) != 0 for o in outs):
        return None
    per_dim = _affine_modes(outs, shape)
    if per_dim is None:
        return None

    def basis(step):
        moved = [k for k, v in enumerate(step) if v]
        if len(moved) > 1:
            return None
        return ScaledBasis(int(step[moved[0]]), (moved[0],)) if moved else ScaledBasis(0, (0,))

    if any(basis(step) is None for modes in per_dim for _, step in modes):
        return None
    return _mode_tree(per_dim, basis)


_MAX_B_BITS = 5  # widest swizzle searched (hardware swizzles use at most 3 bits)


def _swizzle_candidates(width: int):
    """Every non-identity Sw<b, m, s> (b <= _MAX_B_BITS, s >= b) whose source bits lie in a `width`-bit address,
    narrowest first (a wider mask whose top bits never occur would describe the same map)."""
    for b in range(1, min(width, _MAX_B_BITS + 1)):
        for m in range(0, width):
            for s in range(b, width):
                if m + s + b <= width:
                    yield Swizzle(b, m, s)


def composed_from_tilelang(layout, buffer=None):
    """See `ComposedLayout.from_tilelang`."""
    shape = _input_shape(layout)
    address = _linear_address(layout)
    width = max(int(address.max()), 1).bit_length()
    found = None
    for sw in [Swizzle(0, 0, 0), *_swizzle_candidates(width)]:
        plain = sw(address)
        offset = int(plain.flat[0])
        per_dim = _affine_modes([plain - offset], shape)
        if per_dim is not None:
            found = ComposedLayout(sw, offset, _mode_tree(per_dim, lambda step: int(step[0])))
            break
    if found is None or buffer is None:
        return found
    return _in_bytes(found, int(dtype_bits(str(buffer.dtype))))


def _in_bytes(composed: ComposedLayout, bits: int) -> ComposedLayout:
    """The composed layout with addresses counted in bytes instead of `bits`-wide elements (the unit-stride mode
    widens, the other strides scale, the swizzle's m_base moves by log2 of the element's byte count)."""
    if bits % 8:
        raise ValueError(f"ComposedLayout.from_tilelang: a buffer of {bits}-bit elements has no byte-space form; "
                         "call it without the buffer for the element-space swizzle")
    scale = bits // 8

    def widen(shape, stride):
        if isinstance(shape, tuple):
            pairs = [widen(s, d) for s, d in zip(shape, stride)]
            return tuple(p[0] for p in pairs), tuple(p[1] for p in pairs)
        return (shape * scale, 1) if stride == 1 else (shape, stride * scale)

    shape, stride = widen(composed.layout.shape, composed.layout.stride)
    recast = composed.recast(bits, 8)
    return ComposedLayout(recast.swizzle, composed.offset * scale, Layout(shape, stride))
