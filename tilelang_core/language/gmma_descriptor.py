"""The wgmma shared-memory descriptor fields of a swizzled operand tile (`compute_gmma_descriptor`): the swizzle
mode and the leading / stride byte offsets (in 16-byte units), read off the CuTe form of its host layout.

A K-major operand (`transposed=False`, the buffer's last dim is K) is addressed in 8-row groups: the stride byte
offset is the distance between groups and the leading offset is unused (1). An MN-major operand
(`transposed=True`, the last dim is M/N) also steps 8 K-rows by the stride offset; the leading offset is the
distance between swizzle atoms along MN (0 when the tile is a single atom).
"""
from __future__ import annotations

from dataclasses import dataclass

from .cute_recover import composed_from_tilelang
from .cute_tuple import flatten, is_tuple
from .layout import SwizzleMode

_MODES = {1: SwizzleMode.SWIZZLE_32B, 2: SwizzleMode.SWIZZLE_64B, 3: SwizzleMode.SWIZZLE_128B}


@dataclass(frozen=True)
class GmmaDescriptorParams:
    """What a wgmma descriptor encodes about a shared tile."""

    swizzle_mode: SwizzleMode
    leading_byte_offset: int
    stride_byte_offset: int


def _modes(shape, stride) -> list[tuple[int, int]]:
    """One top-level mode's leaves as (size, byte stride) pairs."""
    if is_tuple(shape):
        return list(zip(flatten(shape), flatten(stride)))
    return [(shape, stride)]


def compute_gmma_descriptor(layout, buffer, transposed: bool = False) -> GmmaDescriptorParams:
    """The descriptor fields of `buffer` stored with the bank-swizzled host `layout` (`Sw<b,4,3>` in bytes)."""
    composed = composed_from_tilelang(layout, buffer)
    sw = composed.swizzle if composed is not None else None
    if sw is None or sw.b_bits not in _MODES or (sw.m_base, sw.s_shift) != (4, 3):
        found = "no swizzle over an affine layout" if sw is None else str(sw)
        raise ValueError(f"compute_gmma_descriptor needs a 32/64/128-byte bank swizzle (Sw<b,4,3> in bytes), "
                         f"found {found}; build the layout with make_*_bank_swizzled_layout")
    shape, stride = composed.layout.shape, composed.layout.stride
    if not is_tuple(shape) or len(shape) < 2:
        raise ValueError(f"compute_gmma_descriptor needs a 2-D (or batched) tile, got layout {composed.layout}")
    rows = _modes(shape[-2], stride[-2])
    sbo = 8 * rows[0][1] // 16  # the next group of 8 rows
    if not transposed:
        return GmmaDescriptorParams(_MODES[sw.b_bits], 1, sbo)
    atoms = _modes(shape[-1], stride[-1])[1:]
    lbo = atoms[0][1] // 16 if atoms else 0
    return GmmaDescriptorParams(_MODES[sw.b_bits], lbo, sbo)
